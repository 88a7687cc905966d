// Turkish and English for the hosted pages. The language comes from `?lang=` (which the
// page remembers in a cookie), else the cookie, else Accept-Language; Turkish by default.

export type Lang = 'tr' | 'en'
export const LANGS: readonly Lang[] = ['tr', 'en']
export const LANG_COOKIE = 'kurus_lang'

function asLang(value: string | undefined): Lang | undefined {
  const base = value?.trim().toLowerCase().slice(0, 2)
  return base === 'tr' || base === 'en' ? base : undefined
}

/** The best of tr/en for an Accept-Language header, honouring q-values. */
export function langFromAcceptLanguage(header: string | undefined): Lang | undefined {
  if (!header) return undefined
  const ranked = header
    .split(',')
    .map((part, index) => {
      const [tag, ...params] = part.trim().split(';')
      const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find(Boolean)
      return { lang: asLang(tag), q: q === undefined ? 1 : Number(q), index }
    })
    .filter((r) => r.lang !== undefined && r.q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index)
  return ranked[0]?.lang
}

export function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=')
    if (key === name) return rest.join('=')
  }
  return undefined
}

export function pickLang(p: {
  query: string | undefined
  cookie: string | undefined
  acceptLanguage: string | undefined
}): Lang {
  return (
    asLang(p.query) ??
    asLang(cookieValue(p.cookie, LANG_COOKIE)) ??
    langFromAcceptLanguage(p.acceptLanguage) ??
    'tr'
  )
}

/** ₺1.234,56 (tr) or ₺1,234.56 (en), by integer maths on kuruş. */
export function formatTry(amountMinor: number, lang: Lang): string {
  const negative = amountMinor < 0
  const abs = Math.abs(amountMinor)
  const lira = String(Math.floor(abs / 100))
  const kurus = String(abs % 100).padStart(2, '0')
  const group = lang === 'tr' ? '.' : ','
  const decimal = lang === 'tr' ? ',' : '.'
  const grouped = lira.replace(/\B(?=(\d{3})+(?!\d))/g, group)
  return `${negative ? '−' : ''}₺${grouped}${decimal}${kurus}`
}

const tr = {
  html_title_pay: '{merchant} · Güvenli ödeme',
  html_title_card: '{merchant} · Kart güncelleme',
  html_title_qr: '{merchant} · Karekod ile ödeme',
  html_title_acs: '3-D Secure doğrulaması',
  brand_tagline: 'Güvenli ödeme',
  language: 'Dil',
  amount_due: 'Ödenecek tutar',
  paying_to: 'Satıcı',
  trust_3ds: '3-D Secure ile korunur',
  accepted_cards: 'Geçerli kartlar',
  trust_encrypted: 'Kart bilgileriniz şifrelenir, satıcıyla paylaşılmaz',
  trust_qr_instant: 'FAST ile anında ve güvenli ödeme',
  trust_vault: 'Kartınız güvenli kasada saklanır; dilediğiniz zaman değiştirebilirsiniz',
  trust_qr_bank: 'Ödemeyi kendi bankanızın uygulamasında onaylarsınız',
  sandbox: 'Test ortamı: gerçek para çekilmez.',
  sandbox_cards:
    'Test kartları: 4155 6501 0041 6111 (başarılı), 5528 7900 0000 0008 (3-D Secure), 4000 0000 0000 0002 (red).',
  pay_with_card: 'Kartla öde',
  card_number: 'Kart numarası',
  expiry: 'Son kullanma tarihi',
  expiry_hint: 'AA / YY',
  cvc: 'Güvenlik kodu',
  cvc_hint: 'Kartın arkasındaki 3 hane',
  cvc_hint_amex: 'Kartın önündeki 4 hane',
  holder: 'Kart üzerindeki isim',
  installments: 'Taksit seçenekleri',
  installments_hint: 'Kart numaranızı girdiğinizde taksit seçenekleri burada görünür.',
  installments_loading: 'Taksit seçenekleri yükleniyor…',
  installments_none: 'Bu kartla tek çekim ödeme yapılabilir.',
  single_payment: 'Tek çekim',
  n_installments: '{n} taksit',
  per_installment: '{n} × {amount}',
  total: 'Toplam {amount}',
  save_card: 'Kartımı sonraki alışverişlerim için kaydet',
  save_card_hint: 'Kart numaranız {merchant} ile paylaşılmaz.',
  pay_button: '{amount} öde',
  processing: 'İşleniyor…',
  noscript: 'Ödeme formu JavaScript gerektirir. Lütfen tarayıcınızda JavaScript’i açın.',
  err_number_incomplete: 'Kart numarası eksik.',
  err_number_invalid: 'Bu kart numarası geçerli değil. Lütfen kontrol edin.',
  err_expiry_format: 'Son kullanma tarihini AA / YY biçiminde girin.',
  err_expiry_past: 'Bu kartın kullanım süresi dolmuş.',
  err_cvc: 'Güvenlik kodu {n} haneli olmalı.',
  err_holder: 'Kart üzerindeki ismi girin.',
  err_fix_fields: 'Lütfen işaretli alanları düzeltin.',
  decline_card_declined:
    'Kartınız bankanız tarafından reddedildi. Başka bir kart deneyin ya da bankanızla görüşün.',
  decline_insufficient_funds: 'Kartınızın limiti bu ödeme için yetersiz. Başka bir kart deneyin.',
  decline_authentication_failed: '3-D Secure doğrulaması başarısız oldu. Tekrar deneyin.',
  decline_generic: 'Ödeme tamamlanamadı. Başka bir kart deneyin.',
  decline_title: 'Ödeme reddedildi',
  err_too_many: 'Çok fazla deneme yapıldı. Lütfen bir süre sonra tekrar deneyin.',
  err_network: 'Bağlantı kurulamadı. İnternet bağlantınızı kontrol edip tekrar deneyin.',
  err_session_over: 'Bu ödeme bağlantısı artık geçerli değil.',
  err_unavailable: 'Satıcı şu anda ödeme alamıyor. Lütfen daha sonra tekrar deneyin.',
  err_generic: 'Bir sorun oluştu. Lütfen tekrar deneyin.',
  success_title: 'Ödeme başarılı',
  redirecting: '{merchant} sitesine yönlendiriliyorsunuz…',
  return_now: 'Şimdi dön',
  return_to: '{merchant} sitesine dön',
  card_title: 'Kartınızı güncelleyin',
  card_intro: '{merchant} sonraki ödemelerinizi bu karttan alacak.',
  card_button: 'Kartı güncelle',
  card_details: 'Yeni kartınız',
  card_updated_title: 'Kartınız güncellendi',
  card_updated_body: 'Yeni kartınız {merchant} ödemeleri için kaydedildi.',
  qr_title: 'Karekod ile öde',
  qr_step1: 'Bankanızın mobil uygulamasını açın.',
  qr_step2: '“Karekod ile öde” seçeneğine dokunun.',
  qr_step3: 'Bu karekodu okutun ve ödemeyi onaylayın.',
  qr_alt: '{merchant} için {amount} tutarında ödeme karekodu',
  qr_waiting: 'Ödemeniz bekleniyor…',
  qr_paid: 'Ödeme alındı',
  qr_payload: 'Karekod verisi',
  acs_bank: 'Sandbox Bank',
  acs_title: '3-D Secure doğrulaması',
  acs_intro: 'Bankanız, kayıtlı telefonunuza tek kullanımlık bir doğrulama kodu gönderdi.',
  acs_merchant: 'Üye işyeri',
  acs_amount: 'Tutar',
  acs_card: 'Kart',
  acs_otp: 'Doğrulama kodu',
  acs_otp_hint: '6 haneli kod',
  acs_confirm: 'Onayla',
  acs_sandbox: 'Test kodu: 123456 (başka herhangi bir kod doğrulamayı başarısız kılar).',
  acs_done_title: 'Bu doğrulama tamamlandı',
  acs_done_body: 'Bu ödeme için doğrulama daha önce yapıldı.',
  result_failed_title: 'Ödeme tamamlanamadı',
  result_pending_title: 'Ödemeniz işleniyor',
  result_pending_body: 'Bankanızdan yanıt bekleniyor. Sonucu {merchant} size bildirecek.',
  expired_title: 'Ödeme bağlantısının süresi doldu',
  expired_body:
    'Güvenliğiniz için ödeme bağlantıları 30 dakika geçerlidir. Yeni bir bağlantı için {merchant} sitesine dönün.',
  completed_title: 'Bu ödeme zaten tamamlandı',
  completed_body: 'Bu bağlantıyla yapılan ödeme daha önce alındı. Tekrar ödeme yapmanız gerekmez.',
  cancelled_title: 'Ödeme iptal edildi',
  cancelled_body: 'Bu ödeme {merchant} tarafından iptal edildi.',
  not_found_title: 'Ödeme bağlantısı bulunamadı',
  not_found_body: 'Bağlantıyı kontrol edin ya da satıcıdan yeni bir ödeme bağlantısı isteyin.',
  error_title: 'Bir şeyler ters gitti',
  error_body: 'Lütfen birkaç dakika sonra tekrar deneyin.',
  error_ref: 'Destek için referans: {requestId}',
  bad_request_title: 'Geçersiz istek',
  bad_request_body: 'Bu bağlantı eksik ya da hatalı.',
  rate_title: 'Çok fazla istek',
  rate_body: 'Kısa sürede çok fazla istek yapıldı. Lütfen biraz bekleyip tekrar deneyin.',
  footer: 'Ödeme altyapısı: Kuruş',
  footer_secure: 'Bağlantınız şifreli',
}

export type MessageKey = keyof typeof tr

const en: Record<MessageKey, string> = {
  html_title_pay: '{merchant} · Secure payment',
  html_title_card: '{merchant} · Update card',
  html_title_qr: '{merchant} · Pay with QR code',
  html_title_acs: '3-D Secure verification',
  brand_tagline: 'Secure checkout',
  language: 'Language',
  amount_due: 'Amount due',
  paying_to: 'Pay to',
  trust_3ds: 'Protected by 3-D Secure',
  accepted_cards: 'Cards we accept',
  trust_encrypted: 'Your card details are encrypted and never shared with the seller',
  trust_qr_instant: 'Instant, secure payment over FAST',
  trust_vault: 'Your card is kept in a secure vault; you can change it at any time',
  trust_qr_bank: "You approve the payment in your own bank's app",
  sandbox: 'Test mode: no real money moves.',
  sandbox_cards:
    'Test cards: 4155 6501 0041 6111 (approved), 5528 7900 0000 0008 (3-D Secure), 4000 0000 0000 0002 (declined).',
  pay_with_card: 'Pay by card',
  card_number: 'Card number',
  expiry: 'Expiry date',
  expiry_hint: 'MM / YY',
  cvc: 'Security code',
  cvc_hint: '3 digits on the back of the card',
  cvc_hint_amex: '4 digits on the front of the card',
  holder: 'Name on card',
  installments: 'Installments',
  installments_hint: 'Installment options appear here once you enter your card number.',
  installments_loading: 'Loading installment options…',
  installments_none: 'This card takes single payments only.',
  single_payment: 'Pay in full',
  n_installments: '{n} installments',
  per_installment: '{n} × {amount}',
  total: 'Total {amount}',
  save_card: 'Save my card for future purchases',
  save_card_hint: 'Your card number is never shared with {merchant}.',
  pay_button: 'Pay {amount}',
  processing: 'Processing…',
  noscript: 'The payment form needs JavaScript. Please turn on JavaScript in your browser.',
  err_number_incomplete: 'The card number is incomplete.',
  err_number_invalid: 'This card number is not valid. Please check it.',
  err_expiry_format: 'Enter the expiry date as MM / YY.',
  err_expiry_past: 'This card has expired.',
  err_cvc: 'The security code must be {n} digits.',
  err_holder: 'Enter the name on the card.',
  err_fix_fields: 'Please correct the highlighted fields.',
  decline_card_declined:
    'Your card was declined by your bank. Try another card or contact your bank.',
  decline_insufficient_funds:
    'Your card has insufficient funds for this payment. Try another card.',
  decline_authentication_failed: '3-D Secure verification failed. Please try again.',
  decline_generic: 'The payment could not be completed. Try another card.',
  decline_title: 'Payment declined',
  err_too_many: 'Too many attempts. Please wait a while and try again.',
  err_network: 'We could not connect. Check your internet connection and try again.',
  err_session_over: 'This payment link is no longer valid.',
  err_unavailable: 'The seller cannot take payments right now. Please try again later.',
  err_generic: 'Something went wrong. Please try again.',
  success_title: 'Payment successful',
  redirecting: 'Taking you back to {merchant}…',
  return_now: 'Return now',
  return_to: 'Return to {merchant}',
  card_title: 'Update your card',
  card_intro: '{merchant} will charge this card for your future payments.',
  card_button: 'Update card',
  card_details: 'Your new card',
  card_updated_title: 'Your card has been updated',
  card_updated_body: 'Your new card is saved for payments to {merchant}.',
  qr_title: 'Pay with QR code',
  qr_step1: "Open your bank's mobile app.",
  qr_step2: 'Tap “Pay with QR code”.',
  qr_step3: 'Scan this code and confirm the payment.',
  qr_alt: 'QR code to pay {amount} to {merchant}',
  qr_waiting: 'Waiting for your payment…',
  qr_paid: 'Payment received',
  qr_payload: 'QR payload',
  acs_bank: 'Sandbox Bank',
  acs_title: '3-D Secure verification',
  acs_intro: 'Your bank has sent a one-time verification code to your registered phone.',
  acs_merchant: 'Merchant',
  acs_amount: 'Amount',
  acs_card: 'Card',
  acs_otp: 'Verification code',
  acs_otp_hint: '6-digit code',
  acs_confirm: 'Confirm',
  acs_sandbox: 'Test code: 123456 (any other code fails the verification).',
  acs_done_title: 'This verification is complete',
  acs_done_body: 'This payment has already been verified.',
  result_failed_title: 'Payment not completed',
  result_pending_title: 'Your payment is being processed',
  result_pending_body: 'We are waiting for your bank. {merchant} will let you know the outcome.',
  expired_title: 'This payment link has expired',
  expired_body:
    'For your security, payment links are valid for 30 minutes. Return to {merchant} for a new one.',
  completed_title: 'This payment is already complete',
  completed_body:
    'The payment for this link has already been received. You do not need to pay again.',
  cancelled_title: 'This payment was cancelled',
  cancelled_body: 'This payment was cancelled by {merchant}.',
  not_found_title: 'Payment link not found',
  not_found_body: 'Check the link, or ask the seller for a new payment link.',
  error_title: 'Something went wrong',
  error_body: 'Please try again in a few minutes.',
  error_ref: 'Reference for support: {requestId}',
  bad_request_title: 'Invalid request',
  bad_request_body: 'This link is incomplete or malformed.',
  rate_title: 'Too many requests',
  rate_body: 'Too many requests in a short time. Please wait a moment and try again.',
  footer: 'Payments by Kuruş',
  footer_secure: 'Your connection is encrypted',
}

const MESSAGES: Readonly<Record<Lang, Record<MessageKey, string>>> = { tr, en }

export function t(lang: Lang, key: MessageKey, vars: Record<string, string | number> = {}) {
  return MESSAGES[lang][key].replace(/\{(\w+)\}/g, (whole, name: string) =>
    name in vars ? String(vars[name]) : whole,
  )
}

/** The messages the browser script needs, in one language. */
export function clientMessages(lang: Lang, keys: readonly MessageKey[]): Record<string, string> {
  return Object.fromEntries(keys.map((k) => [k, MESSAGES[lang][k]]))
}
