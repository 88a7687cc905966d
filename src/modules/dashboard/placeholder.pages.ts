import type { FastifyPluginAsync } from 'fastify'
import type { Deps } from '../../database.ts'
import { markup } from '../../platform/web/html.ts'
import { t, type MessageKey } from '../../platform/web/i18n.ts'
import { allow, renderPage } from './dashboard.web.ts'

// A section listed in the navigation whose pages are not built yet: one honest page that says
// so and points to the API that does the job meanwhile. Replaced by the section's own
// `<name>.pages.ts` in sections.ts.
export function placeholderPages(
  id: string,
  label: MessageKey,
  path: string,
): (deps: Deps) => FastifyPluginAsync {
  return (deps) => async (app) => {
    app.get(path, async (request, reply) => {
      const ctx = allow(deps, request, reply, 'read')
      return renderPage(ctx, {
        heading: t(ctx.lang, label),
        section: id,
        content: markup`<div class="panel">
          <p>${t(ctx.lang, 'dash_soon_body')}</p>
          <p><a href="/docs">${t(ctx.lang, 'dash_soon_api')}</a></p>
        </div>`,
      })
    })
  }
}
