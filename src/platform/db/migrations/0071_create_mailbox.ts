import { sql, type Kysely } from 'kysely'

// Owned by the mail module: outgoing email kept in the database when no SMTP_URL is set
// (demo), shown at /dev/mailbox. Frozen in time.
export async function up(db: Kysely<unknown>): Promise<void> {
  await sql`
    create table mailbox (
      id text primary key,
      to_address text not null,
      subject text not null,
      text_body text not null,
      html_body text,
      created_at timestamptz not null
    )`.execute(db)
  await sql`create index mailbox_created_idx on mailbox (created_at desc, id desc)`.execute(db)
}
