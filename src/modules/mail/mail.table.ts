// The demo mailbox: messages kept instead of sent when no SMTP_URL is set.

export interface MailboxTable {
  id: string
  to_address: string
  subject: string
  text_body: string
  html_body: string | null
  created_at: Date
}

export interface MailTables {
  mailbox: MailboxTable
}
