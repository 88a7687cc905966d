// Outgoing email (SMTP, or the demo mailbox) and the demo mailbox page.
export { sendMail, listMailbox } from './mail.service.ts'
export type { MailMessage } from './mail.service.ts'
export { devMailboxRoutes } from './mail.http.ts'
