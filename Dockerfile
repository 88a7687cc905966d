# Kuruş — container image. Node 24 runs the TypeScript sources; the types are stripped once, at
# build time (bin/strip-types.js), rather than by each process. Docker does not run on the development machines; test/operations/image.pg.test.ts
# lays out exactly what the COPY lines below copy, runs the RUN lines, and starts `serve` and
# `worker` from that layout until /readyz answers 200 (docs/decisions/0037-production-readiness.md).

FROM node:24-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
# The workspace package's manifest: the lockfile names it, so `npm ci` wants it in place.
COPY packages/node/package.json ./packages/node/
# --omit=dev: no test or lint tooling, and no second Node. The `node` npm package (the Node 24
# the developers' `npx node` runs) is a devDependency; the image runs the base image's Node 24.
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# NODE_OPTIONS: every process loads the sources as the JavaScript bin/strip-types.js wrote below,
# so none loads Node's type stripper (~18 MiB of resident memory each; bin/stripped-sources.js).
ENV NODE_ENV=production \
    NODE_OPTIONS=--import=./bin/stripped-sources.js \
    KURUS_ENV=live \
    PORT=3000 \
    HOST=0.0.0.0 \
    KURUS_DATA_DIR=/var/lib/kurus
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json ./
COPY src ./src
COPY bin ./bin
# The CLI (src/commands.ts, src/merchant-cli.ts) talks to the API through the SDK's sources.
COPY packages/node/package.json ./packages/node/
COPY packages/node/src ./packages/node/src
# The API reference serves the Testing page from it (/docs/testing, src/pages/api-reference.ts).
COPY docs/testing-cards.md ./docs/
RUN node bin/strip-types.js
RUN mkdir -p /var/lib/kurus && chown node:node /var/lib/kurus
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 CMD ["node", "-e", "fetch('http://127.0.0.1:'+process.env.PORT+'/readyz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
# API processes; the worker runs from the same image: node src/main.ts worker (compose.yaml).
CMD ["node", "src/main.ts", "serve", "--no-worker"]
