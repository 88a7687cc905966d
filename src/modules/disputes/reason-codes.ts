// What a chargeback's reason code means and what the bank wants as evidence, for the people
// who answer it (the dashboard's chargeback pages and the evidence PDF). Visa's dispute
// categories (VCR, "10.4") and Mastercard's reason codes ("4837"); a code we do not know is
// shown as it is. The words are a summary for the merchant, not the networks' rule text.

export type ReasonNetwork = 'visa' | 'mastercard'

interface Words {
  /** The reason in a few words. */
  title: string
  /** What to send to win it back. */
  evidence: string
}

export interface ReasonCode {
  code: string
  network: ReasonNetwork
  tr: Words
  en: Words
}

type Row = readonly [code: string, network: ReasonNetwork, tr: Words, en: Words]

const w = (title: string, evidence: string): Words => ({ title, evidence })

// Evidence texts that several codes share.
const FRAUD_CNP = {
  tr: 'Ödemenin 3-D Secure ile doğrulandığını, alıcının daha önce aynı kartla itirazsız ödeme yaptığını; teslimat adresini, IP adresini, cihaz bilgisini ve alıcıyla yazışmaları gönderin.',
  en: 'Show the payment was authenticated with 3-D Secure or that the buyer paid with the same card before without dispute; send the delivery address, IP address, device details and your correspondence with the buyer.',
}
const NOT_RECEIVED = {
  tr: 'Teslimatı kanıtlayın: kargo takip numarası, teslim tutanağı veya imzalı teslim belgesi; hizmetse verildiğini gösteren kayıtlar.',
  en: 'Prove delivery: a tracking number, a delivery confirmation or signed receipt; for a service, records showing it was provided.',
}
const NOT_AS_DESCRIBED = {
  tr: 'Ürünün açıklamasını (ilan, fotoğraflar), alıcıya gönderilenin açıklamaya uyduğunu gösteren belgeleri, iade politikanızı ve alıcıyla yazışmaları gönderin.',
  en: 'Send the product description (listing, photos), documents showing what was sent matches it, your return policy and your correspondence with the buyer.',
}
const CREDIT = {
  tr: 'İadenin yapıldığını (iade tarihi ve tutarı) ya da iade politikanıza göre hakkı olmadığını gösterin; politikanın ödeme sırasında alıcıya gösterildiğini belgeleyin.',
  en: 'Show the refund was made (date and amount), or that your refund policy did not entitle the buyer to one and that it was shown at checkout.',
}
const RECURRING = {
  tr: 'Aboneliğin iptal edilmediğini ya da iptalden önce ücretlendirildiğini, alıcının abonelik şartlarını kabul ettiğini ve ücretlendirme öncesi bildirimleri gönderin.',
  en: 'Show the subscription was not cancelled or was charged before the cancellation, that the buyer agreed to its terms, and the notices sent before the charge.',
}
const AUTHORIZATION = {
  tr: 'İşlemin bankadan onay aldığını gösteren provizyon kodunu ve tarihini gönderin.',
  en: 'Send the authorization code and date showing the issuer approved the transaction.',
}
const PROCESSING = {
  tr: 'İşlemin tutarının, para biriminin ve tarihinin doğru olduğunu gösteren sipariş kaydını ve alıcının onayladığı tutarı gönderin.',
  en: 'Send the order record showing the amount, currency and date were right, and the amount the buyer agreed to.',
}
const DUPLICATE = {
  tr: 'İki ayrı siparişin olduğunu gösterin (iki sipariş numarası, iki teslimat) ya da mükerrer tutarın iade edildiğini belgeleyin.',
  en: 'Show there were two separate orders (two order numbers, two deliveries), or that the duplicate amount was refunded.',
}
const CARD_PRESENT = {
  tr: 'Kartın çipli okunduğunu ve PIN ile onaylandığını gösteren POS fişini gönderin.',
  en: 'Send the terminal receipt showing the chip was read and the PIN verified.',
}

const ROWS: readonly Row[] = [
  // Visa (Visa Claims Resolution)
  [
    '10.1',
    'visa',
    w('EMV sorumluluk kayması: sahte kart', CARD_PRESENT.tr),
    w('EMV liability shift: counterfeit', CARD_PRESENT.en),
  ],
  [
    '10.2',
    'visa',
    w('EMV sorumluluk kayması: sahte olmayan kart', CARD_PRESENT.tr),
    w('EMV liability shift: non-counterfeit', CARD_PRESENT.en),
  ],
  [
    '10.3',
    'visa',
    w('Kart sahibinin onayı yok (kart ibrazlı)', CARD_PRESENT.tr),
    w('Other fraud: card present', CARD_PRESENT.en),
  ],
  [
    '10.4',
    'visa',
    w('Kart sahibinin onayı yok (kart ibrazsız)', FRAUD_CNP.tr),
    w('Other fraud: card absent', FRAUD_CNP.en),
  ],
  [
    '10.5',
    'visa',
    w('Visa dolandırıcılık izleme programı', FRAUD_CNP.tr),
    w('Visa Fraud Monitoring Program', FRAUD_CNP.en),
  ],
  [
    '11.1',
    'visa',
    w('Kart iptal listesinde', AUTHORIZATION.tr),
    w('Card recovery bulletin', AUTHORIZATION.en),
  ],
  [
    '11.2',
    'visa',
    w('Provizyon reddedilmişti', AUTHORIZATION.tr),
    w('Declined authorization', AUTHORIZATION.en),
  ],
  [
    '11.3',
    'visa',
    w('Provizyon alınmamış', AUTHORIZATION.tr),
    w('No authorization', AUTHORIZATION.en),
  ],
  ['12.1', 'visa', w('Geç sunulan işlem', PROCESSING.tr), w('Late presentment', PROCESSING.en)],
  [
    '12.2',
    'visa',
    w('Yanlış işlem kodu', PROCESSING.tr),
    w('Incorrect transaction code', PROCESSING.en),
  ],
  ['12.3', 'visa', w('Yanlış para birimi', PROCESSING.tr), w('Incorrect currency', PROCESSING.en)],
  [
    '12.4',
    'visa',
    w('Yanlış kart numarası', PROCESSING.tr),
    w('Incorrect account number', PROCESSING.en),
  ],
  ['12.5', 'visa', w('Yanlış tutar', PROCESSING.tr), w('Incorrect amount', PROCESSING.en)],
  ['12.6.1', 'visa', w('Mükerrer işlem', DUPLICATE.tr), w('Duplicate processing', DUPLICATE.en)],
  [
    '12.6.2',
    'visa',
    w('Başka yolla ödenmiş', DUPLICATE.tr),
    w('Paid by other means', DUPLICATE.en),
  ],
  ['12.7', 'visa', w('Geçersiz veri', PROCESSING.tr), w('Invalid data', PROCESSING.en)],
  [
    '13.1',
    'visa',
    w('Ürün veya hizmet alınmadı', NOT_RECEIVED.tr),
    w('Merchandise or services not received', NOT_RECEIVED.en),
  ],
  [
    '13.2',
    'visa',
    w('İptal edilmiş düzenli ödeme', RECURRING.tr),
    w('Cancelled recurring transaction', RECURRING.en),
  ],
  [
    '13.3',
    'visa',
    w('Açıklandığı gibi değil veya kusurlu', NOT_AS_DESCRIBED.tr),
    w('Not as described or defective', NOT_AS_DESCRIBED.en),
  ],
  [
    '13.4',
    'visa',
    w('Sahte ürün', NOT_AS_DESCRIBED.tr),
    w('Counterfeit merchandise', NOT_AS_DESCRIBED.en),
  ],
  [
    '13.5',
    'visa',
    w('Yanıltıcı satış', NOT_AS_DESCRIBED.tr),
    w('Misrepresentation', NOT_AS_DESCRIBED.en),
  ],
  ['13.6', 'visa', w('İade yapılmadı', CREDIT.tr), w('Credit not processed', CREDIT.en)],
  [
    '13.7',
    'visa',
    w('İptal edilen ürün veya hizmet', CREDIT.tr),
    w('Cancelled merchandise or services', CREDIT.en),
  ],
  // Mastercard
  [
    '4808',
    'mastercard',
    w('Provizyonla ilgili itiraz', AUTHORIZATION.tr),
    w('Authorization-related chargeback', AUTHORIZATION.en),
  ],
  [
    '4812',
    'mastercard',
    w('Kart numarası kayıtlı değil', PROCESSING.tr),
    w('Account number not on file', PROCESSING.en),
  ],
  [
    '4831',
    'mastercard',
    w('İşlem tutarı farklı', PROCESSING.tr),
    w('Transaction amount differs', PROCESSING.en),
  ],
  [
    '4834',
    'mastercard',
    w('Mükerrer veya hatalı işlem', DUPLICATE.tr),
    w('Point-of-interaction error (duplicate or wrong processing)', DUPLICATE.en),
  ],
  [
    '4837',
    'mastercard',
    w('Kart sahibi işlemi onaylamadığını söylüyor', FRAUD_CNP.tr),
    w('No cardholder authorization', FRAUD_CNP.en),
  ],
  [
    '4840',
    'mastercard',
    w('Hileli işlem', FRAUD_CNP.tr),
    w('Fraudulent processing of transactions', FRAUD_CNP.en),
  ],
  [
    '4841',
    'mastercard',
    w('İptal edilmiş düzenli ödeme', RECURRING.tr),
    w('Cancelled recurring or digital goods transaction', RECURRING.en),
  ],
  [
    '4842',
    'mastercard',
    w('Geç sunulan işlem', PROCESSING.tr),
    w('Late presentment', PROCESSING.en),
  ],
  [
    '4849',
    'mastercard',
    w('Şüpheli üye işyeri faaliyeti', FRAUD_CNP.tr),
    w('Questionable merchant activity', FRAUD_CNP.en),
  ],
  [
    '4853',
    'mastercard',
    w('Kart sahibi itirazı: kusurlu, açıklandığı gibi değil', NOT_AS_DESCRIBED.tr),
    w('Cardholder dispute: defective or not as described', NOT_AS_DESCRIBED.en),
  ],
  [
    '4855',
    'mastercard',
    w('Ürün veya hizmet teslim edilmedi', NOT_RECEIVED.tr),
    w('Goods or services not provided', NOT_RECEIVED.en),
  ],
  ['4860', 'mastercard', w('İade yapılmadı', CREDIT.tr), w('Credit not processed', CREDIT.en)],
  [
    '4863',
    'mastercard',
    w('Kart sahibi işlemi tanımıyor', FRAUD_CNP.tr),
    w('Cardholder does not recognize: potential fraud', FRAUD_CNP.en),
  ],
  [
    '4870',
    'mastercard',
    w('Çip sorumluluk kayması', CARD_PRESENT.tr),
    w('Chip liability shift', CARD_PRESENT.en),
  ],
  [
    '4871',
    'mastercard',
    w('Çip/PIN sorumluluk kayması', CARD_PRESENT.tr),
    w('Chip/PIN liability shift', CARD_PRESENT.en),
  ],
]

const BY_CODE: ReadonlyMap<string, ReasonCode> = new Map(
  ROWS.map(([code, network, tr, en]) => [code, { code, network, tr, en }]),
)

/** The reason code's meaning and the evidence to send; undefined for a code we do not know. */
export function reasonCodeInfo(code: string): ReasonCode | undefined {
  return BY_CODE.get(code.trim())
}
