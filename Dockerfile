# Kuruş — container image. A plain mirror of the tested start command (`node src/main.ts`);
# it cannot be built on the development machines (no Docker engine there).
# Node 24 LTS runs the TypeScript sources directly (type stripping): there is no build step.

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# --omit=dev: no test or lint tooling in the image. The `node` dependency brings the same
# Node 24 the project pins; the image's own node is used to run it.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
ENV NODE_ENV=production \
    KURUS_ENV=live \
    PORT=3000 \
    HOST=0.0.0.0 \
    KURUS_DATA_DIR=/var/lib/kurus
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY bin ./bin
RUN mkdir -p /var/lib/kurus && chown -R node:node /var/lib/kurus
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s CMD node -e "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"
# API processes; run workers from the same image with: node src/main.ts worker
CMD ["node", "src/main.ts", "serve", "--no-worker"]
