import type { Db } from '../../database.ts'
import { newId } from '../../platform/ids.ts'
import type { MailboxTable } from './mail.table.ts'

export async function insertMailboxMessage(
  db: Db,
  message: { to: string; subject: string; text: string; html?: string },
  at: Date,
): Promise<void> {
  await db
    .insertInto('mailbox')
    .values({
      id: newId('msg'),
      to_address: message.to,
      subject: message.subject,
      text_body: message.text,
      html_body: message.html ?? null,
      created_at: at,
    })
    .execute()
}

export async function selectMailbox(
  db: Db,
  to: string | undefined,
  limit: number,
): Promise<MailboxTable[]> {
  let query = db.selectFrom('mailbox').selectAll()
  if (to !== undefined) query = query.where('to_address', '=', to)
  return query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(limit).execute()
}
