import type { MessageTable } from '../../platform/web/i18n.ts'

// The payment link page's words (`plink_…`), Turkish and English. Turkish is the source: the
// English table must have exactly its keys (the type says so). app.ts adds the table to the one
// catalogue; the declaration below adds its keys to MessageKey, so `t()` checks them.

const tr = {
  plink_title: '{merchant} · Ödeme',
  plink_eyebrow: 'Ödeme linki',
  plink_amount_label: 'Ödenecek tutar',
  plink_pay_heading: 'Ödeme',
  plink_pay: '{amount} Öde',
  plink_field_name: 'Ad soyad',
  plink_field_email: 'E-posta',
  plink_field_phone: 'Telefon',
  plink_field_name_error: 'Adınızı ve soyadınızı yazın.',
  plink_field_email_error: 'Geçerli bir e-posta adresi yazın.',
  plink_field_phone_error: 'Geçerli bir telefon numarası yazın.',
  plink_failed_note: 'Ödeme tamamlanamadı. Başka bir kartla tekrar deneyebilirsiniz.',
  plink_pending_note: 'Ödemeniz işleniyor. Sonuç birkaç dakika içinde belli olacak.',
  plink_busy_note:
    'Bu linkle alınabilecek son ödemeler şu anda başka alıcılar tarafından yapılıyor. Birkaç dakika sonra tekrar deneyin.',
  plink_thanks_title: 'Ödemeniz alındı',
  plink_thanks_body: 'Teşekkürler! {merchant} ödemenizi aldı.',
  plink_gone_deactivated_title: 'Bu link artık kullanılmıyor',
  plink_gone_deactivated_body: '{merchant} bu ödeme linkini kapattı; ödeme alınmaz.',
  plink_gone_expired_title: 'Bu linkin süresi doldu',
  plink_gone_expired_body: 'Bu ödeme linkinin süresi doldu. {merchant} ile iletişime geçin.',
  plink_gone_completed_title: 'Bu link tükendi',
  plink_gone_completed_body:
    'Bu linkle alınabilecek ödemelerin hepsi yapıldı. {merchant} ile iletişime geçin.',
  plink_not_found_title: 'Ödeme linki bulunamadı',
  plink_not_found_body: 'Bağlantıyı kontrol edin ya da satıcıdan yeni bir link isteyin.',
}

const en: Record<keyof typeof tr, string> = {
  plink_title: '{merchant} · Payment',
  plink_eyebrow: 'Payment link',
  plink_amount_label: 'Amount to pay',
  plink_pay_heading: 'Payment',
  plink_pay: 'Pay {amount}',
  plink_field_name: 'Full name',
  plink_field_email: 'Email',
  plink_field_phone: 'Phone',
  plink_field_name_error: 'Enter your full name.',
  plink_field_email_error: 'Enter a valid email address.',
  plink_field_phone_error: 'Enter a valid phone number.',
  plink_failed_note: 'The payment could not be completed. You can try again with another card.',
  plink_pending_note: 'Your payment is being processed. The result will be known in a few minutes.',
  plink_busy_note:
    'The last payments this link takes are being made by other buyers right now. Try again in a few minutes.',
  plink_thanks_title: 'Payment received',
  plink_thanks_body: 'Thank you! {merchant} has received your payment.',
  plink_gone_deactivated_title: 'This link is no longer in use',
  plink_gone_deactivated_body: '{merchant} has closed this payment link; it takes no payments.',
  plink_gone_expired_title: 'This link has expired',
  plink_gone_expired_body: 'This payment link has expired. Please contact {merchant}.',
  plink_gone_completed_title: 'This link is used up',
  plink_gone_completed_body:
    'Every payment this link takes has been made. Please contact {merchant}.',
  plink_not_found_title: 'Payment link not found',
  plink_not_found_body: 'Check the link, or ask the seller for a new one.',
}

export const paymentLinksMessages: MessageTable = { tr, en }

declare module '../../platform/web/i18n.ts' {
  interface MessageTables {
    paymentLinks: typeof tr
  }
}
