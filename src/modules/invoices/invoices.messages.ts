import type { MessageTable } from '../../platform/web/i18n.ts'

// The hosted invoice page's words (`inv_…`), Turkish and English. Turkish is the source: the
// English table must have exactly its keys (the type says so). app.ts adds the table to the one
// catalogue; the declaration below adds its keys to MessageKey, so `t()` checks them.

const tr = {
  inv_title: '{merchant} · Fatura',
  inv_eyebrow: 'Fatura',
  inv_amount_label: 'Ödenecek tutar',
  inv_amount_label_paid: 'Ödenen tutar',
  inv_invoice_no: 'Fatura no: {id}',
  inv_details: 'Fatura ayrıntıları',
  inv_lines_caption: 'Fatura kalemleri',
  inv_col_item: 'Açıklama',
  inv_col_qty: 'Adet',
  inv_col_unit: 'Birim fiyat',
  inv_col_total: 'Tutar',
  inv_total: 'Toplam',
  inv_status: 'Durum',
  inv_buyer: 'Alıcı',
  inv_due_date: 'Son ödeme tarihi',
  inv_expires_at: 'Bağlantı geçerliliği',
  inv_pay: 'Öde',
  inv_pdf: 'Faturayı PDF olarak indir',
  inv_status_sent: 'Ödeme bekleniyor',
  inv_status_activated: 'Ödeme bekleniyor',
  inv_status_viewed: 'Ödeme bekleniyor',
  inv_status_draft: 'Taslak',
  inv_status_paid: 'Ödendi',
  inv_status_expired: 'Süresi doldu',
  inv_status_cancelled: 'İptal edildi',
  inv_paid_note: 'Bu fatura {date} tarihinde ödendi. Teşekkürler!',
  inv_expired_note: 'Bu faturanın ödeme bağlantısının süresi doldu. Satıcıyla iletişime geçin.',
  inv_cancelled_note: 'Bu fatura satıcı tarafından iptal edildi; ödeme alınmaz.',
  inv_failed_note: 'Ödeme tamamlanamadı. Başka bir kartla tekrar deneyebilirsiniz.',
  inv_pending_note: 'Ödemeniz işleniyor. Sonuç birkaç dakika içinde burada görünecek.',
  inv_not_found_title: 'Fatura bulunamadı',
  inv_not_found_body: 'Bağlantıyı kontrol edin ya da satıcıdan yeni bir bağlantı isteyin.',
}

const en: Record<keyof typeof tr, string> = {
  inv_title: '{merchant} · Invoice',
  inv_eyebrow: 'Invoice',
  inv_amount_label: 'Amount due',
  inv_amount_label_paid: 'Amount paid',
  inv_invoice_no: 'Invoice no: {id}',
  inv_details: 'Invoice details',
  inv_lines_caption: 'Invoice lines',
  inv_col_item: 'Description',
  inv_col_qty: 'Qty',
  inv_col_unit: 'Unit price',
  inv_col_total: 'Amount',
  inv_total: 'Total',
  inv_status: 'Status',
  inv_buyer: 'Billed to',
  inv_due_date: 'Due date',
  inv_expires_at: 'Link valid until',
  inv_pay: 'Pay',
  inv_pdf: 'Download the invoice as PDF',
  inv_status_sent: 'Awaiting payment',
  inv_status_activated: 'Awaiting payment',
  inv_status_viewed: 'Awaiting payment',
  inv_status_draft: 'Draft',
  inv_status_paid: 'Paid',
  inv_status_expired: 'Expired',
  inv_status_cancelled: 'Cancelled',
  inv_paid_note: 'This invoice was paid on {date}. Thank you!',
  inv_expired_note: "This invoice's payment link has expired. Please contact the seller.",
  inv_cancelled_note: 'The seller cancelled this invoice; no payment is taken.',
  inv_failed_note: 'The payment could not be completed. You can try again with another card.',
  inv_pending_note: 'Your payment is being processed. The result will show here in a few minutes.',
  inv_not_found_title: 'Invoice not found',
  inv_not_found_body: 'Check the link, or ask the seller for a new one.',
}

export const invoicesMessages: MessageTable = { tr, en }

declare module '../../platform/web/i18n.ts' {
  interface MessageTables {
    invoices: typeof tr
  }
}
