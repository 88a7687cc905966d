// The platform's own words, Turkish and English: the one shell (skip link, menu, language
// switch, sandbox badge, footer), error pages and shared components (`web_…`). Each module
// keeps its words in its <module>.messages.ts, and app.ts combines them into the one
// catalogue (i18n.ts). Turkish is the source: the English table must have exactly its keys.

export const tr = {
  brand_tagline: 'Güvenli ödeme',
  language: 'Dil',
  sandbox: 'Test ortamı: gerçek para çekilmez.',
  acs_bank: 'Sandbox Bank',
  footer: 'Ödeme altyapısı: Kuruş',
  footer_secure: 'Bağlantınız şifreli',
  web_skip_to_content: 'İçeriğe geç',
  web_sandbox: 'Test ortamı',
  web_sign_out: 'Çıkış',
  web_menu: 'Menü',
  web_technical_details: 'Teknik ayrıntılar',
  web_pages: 'Sayfalar',
  web_first_page: 'İlk sayfa',
  web_next_page: 'Sonraki sayfa',
  web_back_home: 'Genel bakışa dön',
  web_error_403_title: 'Bu işlem için yetkiniz yok',
  web_error_403_body:
    'Rolünüz bu sayfayı ya da işlemi kapsamıyor, ya da form süresi doldu. Hiçbir şey değişmedi. Sayfayı yenileyip tekrar deneyin veya ekibinizin sahibine danışın.',
  web_error_404_title: 'Sayfa bulunamadı',
  web_error_404_body: 'Aradığınız kayıt yok ya da bu hesaba ait değil.',
  web_error_429_title: 'Çok fazla istek',
  web_error_429_body: 'Kısa sürede çok fazla istek yapıldı. Lütfen biraz bekleyip tekrar deneyin.',
  web_error_other_title: 'Bir şeyler ters gitti',
  web_error_other_body: 'İstek tamamlanamadı. Lütfen tekrar deneyin.',
  web_error_ref: 'Destek için referans: {requestId}',
}

export const en: Record<keyof typeof tr, string> = {
  brand_tagline: 'Secure checkout',
  language: 'Language',
  sandbox: 'Test mode: no real money moves.',
  acs_bank: 'Sandbox Bank',
  footer: 'Payments by Kuruş',
  footer_secure: 'Your connection is encrypted',
  web_skip_to_content: 'Skip to content',
  web_sandbox: 'Sandbox',
  web_sign_out: 'Sign out',
  web_menu: 'Menu',
  web_technical_details: 'Technical details',
  web_pages: 'Pages',
  web_first_page: 'First page',
  web_next_page: 'Next page',
  web_back_home: 'Back to the overview',
  web_error_403_title: 'You are not allowed to do this',
  web_error_403_body:
    "Your role does not cover this page or action, or the form expired. Nothing was changed. Reload the page and try again, or ask your team's owner.",
  web_error_404_title: 'Page not found',
  web_error_404_body: 'What you are looking for does not exist or does not belong to this account.',
  web_error_429_title: 'Too many requests',
  web_error_429_body: 'Too many requests in a short time. Please wait a moment and try again.',
  web_error_other_title: 'Something went wrong',
  web_error_other_body: 'The request could not be completed. Please try again.',
  web_error_ref: 'Reference for support: {requestId}',
}
