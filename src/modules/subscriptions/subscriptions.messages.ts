import type { MessageTable } from '../../platform/web/i18n.ts'

// The subscription page's words (`sub_…`), Turkish and English. Turkish is the source: the
// English table must have exactly its keys (the type says so). app.ts adds the table to the one
// catalogue; the declaration below adds its keys to MessageKey, so `t()` checks them.

const tr = {
  sub_title: '{merchant} · Aboneliğiniz',
  sub_eyebrow: 'Aboneliğiniz',
  sub_details: 'Abonelik bilgileri',
  sub_status: 'Durum',
  sub_next_charge: 'Sonraki ödeme',
  sub_next_retry: 'Sonraki deneme',
  sub_ends_on: 'Sona erme',
  sub_first_charge: 'İlk ödeme',
  sub_card: 'Kart',
  sub_cancel: 'İptal',
  sub_update_card: 'Kartı güncelle',
  sub_processing: 'İşleniyor…',
  sub_status_trialing: 'Deneme süresinde',
  sub_status_active: 'Aktif',
  sub_status_past_due: 'Ödeme alınamadı',
  sub_status_paused: 'Duraklatıldı',
  sub_status_cancelled: 'İptal edildi',
  sub_status_expired: 'Sona erdi',
  sub_status_charging: 'Ödeme alınıyor',
  sub_status_ending: 'Dönem sonunda iptal edilecek',
  sub_past_due_note: 'Son ödeme alınamadı. Kartınızı güncellerseniz ödeme yeni karttan denenir.',
  sub_ending_note: 'Aboneliğiniz {date} tarihinde sona erecek; bundan sonra ödeme alınmayacak.',
  sub_ended_note: 'Bu abonelik sona erdi; kartınızdan başka ödeme alınmayacak.',
  sub_cancelled_now: 'Aboneliğiniz iptal edildi.',
  sub_card_updated: 'Kartınız güncellendi. Sonraki ödemeler bu karttan alınacak.',
  sub_err_generic: 'Bir sorun oluştu. Lütfen tekrar deneyin.',
  sub_err_network: 'Bağlantı kurulamadı. İnternet bağlantınızı kontrol edip tekrar deneyin.',
  sub_err_rate: 'Çok fazla istek yapıldı. Lütfen biraz bekleyip tekrar deneyin.',
  sub_err_busy: 'Şu anda bir ödeme işleniyor. Birkaç saniye sonra tekrar deneyin.',
  sub_not_found_title: 'Abonelik bulunamadı',
  sub_not_found_body: 'Bağlantıyı kontrol edin ya da satıcıdan yeni bir bağlantı isteyin.',
  sub_every_day: 'Her gün',
  sub_every_week: 'Her hafta',
  sub_every_month: 'Her ay',
  sub_every_year: 'Her yıl',
  sub_every_n_day: 'Her {n} günde bir',
  sub_every_n_week: 'Her {n} haftada bir',
  sub_every_n_month: 'Her {n} ayda bir',
  sub_every_n_year: 'Her {n} yılda bir',
}

const en: Record<keyof typeof tr, string> = {
  sub_title: '{merchant} · Your subscription',
  sub_eyebrow: 'Your subscription',
  sub_details: 'Subscription details',
  sub_status: 'Status',
  sub_next_charge: 'Next payment',
  sub_next_retry: 'Next attempt',
  sub_ends_on: 'Ends on',
  sub_first_charge: 'First payment',
  sub_card: 'Card',
  sub_cancel: 'Cancel',
  sub_update_card: 'Update card',
  sub_processing: 'Processing…',
  sub_status_trialing: 'In trial',
  sub_status_active: 'Active',
  sub_status_past_due: 'Payment failed',
  sub_status_paused: 'Paused',
  sub_status_cancelled: 'Cancelled',
  sub_status_expired: 'Ended',
  sub_status_charging: 'Taking payment',
  sub_status_ending: 'Cancels at the end of the period',
  sub_past_due_note: 'The last payment failed. If you update your card, the new card is tried.',
  sub_ending_note: 'Your subscription ends on {date}; no further payments will be taken.',
  sub_ended_note: 'This subscription has ended; no further payments will be taken.',
  sub_cancelled_now: 'Your subscription is cancelled.',
  sub_card_updated: 'Your card is updated. Future payments will be taken from it.',
  sub_err_generic: 'Something went wrong. Please try again.',
  sub_err_network: 'Could not connect. Check your internet connection and try again.',
  sub_err_rate: 'Too many requests. Please wait a moment and try again.',
  sub_err_busy: 'A payment is being taken right now. Try again in a few seconds.',
  sub_not_found_title: 'Subscription not found',
  sub_not_found_body: 'Check the link, or ask the seller for a new one.',
  sub_every_day: 'Every day',
  sub_every_week: 'Every week',
  sub_every_month: 'Every month',
  sub_every_year: 'Every year',
  sub_every_n_day: 'Every {n} days',
  sub_every_n_week: 'Every {n} weeks',
  sub_every_n_month: 'Every {n} months',
  sub_every_n_year: 'Every {n} years',
}

export const subscriptionsMessages: MessageTable = { tr, en }

declare module '../../platform/web/i18n.ts' {
  interface MessageTables {
    subscriptions: typeof tr
  }
}
