import { escapeHtml } from '../platform/web/html.ts'

// Markdown to HTML for the generated docs the server serves (docs/testing-cards.md at
// /docs/testing, issue 38): the subset scripts/testing-page.ts writes — headings, paragraphs,
// "-" lists, pipe tables, `code` and **bold** — and nothing else, so no dependency for it.
// Every piece of text is escaped; the document's HTML comments are dropped, raw HTML is shown
// as text.

function inline(text: string): string {
  return text
    .split('`')
    .map((part, i) =>
      i % 2 === 1
        ? `<code>${escapeHtml(part)}</code>`
        : escapeHtml(part).replace(/\*\*(.+?)\*\*/g, '<strong>$1</strong>'),
    )
    .join('')
}

function cells(row: string): string[] {
  return row
    .trim()
    .replace(/^\||\|$/g, '')
    .split('|')
    .map((cell) => cell.trim())
}

function table(lines: string[]): string {
  const [head = '', , ...rows] = lines
  const th = cells(head)
    .map((cell) => `<th>${inline(cell)}</th>`)
    .join('')
  const body = rows
    .map(
      (row) =>
        `<tr>${cells(row)
          .map((cell) => `<td>${inline(cell)}</td>`)
          .join('')}</tr>`,
    )
    .join('\n')
  return `<table>\n<thead><tr>${th}</tr></thead>\n<tbody>\n${body}\n</tbody>\n</table>`
}

function list(lines: string[]): string {
  const items: string[] = []
  for (const line of lines) {
    if (line.startsWith('- ')) items.push(line.slice(2))
    else items.push(`${items.pop() ?? ''} ${line.trim()}`)
  }
  return `<ul>\n${items.map((item) => `<li>${inline(item)}</li>`).join('\n')}\n</ul>`
}

/** The HTML of `source`, block by block (blocks are separated by blank lines). */
export function markdownToHtml(source: string): string {
  const blocks = source
    .replace(/<!--[\s\S]*?-->/g, '')
    .split(/\n\s*\n/)
    .map((block) => block.trim())
    .filter((block) => block.length > 0)
  return blocks
    .map((block) => {
      const heading = /^(#{1,6}) (.*)$/.exec(block)
      if (heading && !block.includes('\n')) {
        const level = heading[1]?.length ?? 1
        return `<h${level}>${inline(heading[2] ?? '')}</h${level}>`
      }
      const lines = block.split('\n')
      if (lines.every((line) => line.trimStart().startsWith('|'))) return table(lines)
      if (block.startsWith('- ')) return list(lines)
      return `<p>${inline(lines.join(' '))}</p>`
    })
    .join('\n')
}
