// Turkish public holidays, the data table behind EFT business days (decision 0040).
//
// Sources:
// - National holidays: Law No. 2429 on National Holidays and General Holidays (Ulusal Bayram
//   ve Genel Tatiller Hakkında Kanun), art. 1–2: 1 January, 23 April, 1 May, 19 May, 15 July,
//   30 August, 29 October (28 October from 13:00 is a half-day), the Ramazan Bayramı (3 days,
//   its eve — arife — a half-day from 13:00) and the Kurban Bayramı (4 days, its eve a half-day).
// - Religious holiday dates: Diyanet İşleri Başkanlığı, "Dini Günler Takvimi" 2026 and 2027
//   (Ramazan Bayramı 20–22 March 2026 and 9–11 March 2027; Kurban Bayramı 27–30 May 2026 and
//   16–19 May 2027), cross-checked against the `date-holidays` npm package's TR calendar.
// - Not included: one-off administrative leave (idari izin) the government may announce for
//   public servants; the interbank systems (EFT, FAST) keep to the law's days. Add such a day
//   here when the CBRT (TCMB) announces EFT closed on it.
//
// Half-days: EFT closes at 12:00 (Istanbul) instead of its usual cut-off; FAST runs every day.
// The table must be extended every year (the religious dates move ~11 days earlier each
// year): the calendar test asserts the years it covers.

export interface HolidayRow {
  /** Istanbul calendar date, YYYY-MM-DD. */
  date: string
  name: string
  /** true: an afternoon off (EFT closes at noon); false: the whole day. */
  halfDay: boolean
}

export const TR_PUBLIC_HOLIDAYS: readonly HolidayRow[] = [
  // 2026
  { date: '2026-01-01', name: 'Yılbaşı', halfDay: false },
  { date: '2026-03-19', name: 'Ramazan Bayramı arifesi', halfDay: true },
  { date: '2026-03-20', name: 'Ramazan Bayramı 1. gün', halfDay: false },
  { date: '2026-03-21', name: 'Ramazan Bayramı 2. gün', halfDay: false },
  { date: '2026-03-22', name: 'Ramazan Bayramı 3. gün', halfDay: false },
  { date: '2026-04-23', name: 'Ulusal Egemenlik ve Çocuk Bayramı', halfDay: false },
  { date: '2026-05-01', name: 'Emek ve Dayanışma Günü', halfDay: false },
  { date: '2026-05-19', name: "Atatürk'ü Anma, Gençlik ve Spor Bayramı", halfDay: false },
  { date: '2026-05-26', name: 'Kurban Bayramı arifesi', halfDay: true },
  { date: '2026-05-27', name: 'Kurban Bayramı 1. gün', halfDay: false },
  { date: '2026-05-28', name: 'Kurban Bayramı 2. gün', halfDay: false },
  { date: '2026-05-29', name: 'Kurban Bayramı 3. gün', halfDay: false },
  { date: '2026-05-30', name: 'Kurban Bayramı 4. gün', halfDay: false },
  { date: '2026-07-15', name: 'Demokrasi ve Millî Birlik Günü', halfDay: false },
  { date: '2026-08-30', name: 'Zafer Bayramı', halfDay: false },
  { date: '2026-10-28', name: 'Cumhuriyet Bayramı arifesi', halfDay: true },
  { date: '2026-10-29', name: 'Cumhuriyet Bayramı', halfDay: false },
  // 2027
  { date: '2027-01-01', name: 'Yılbaşı', halfDay: false },
  { date: '2027-03-08', name: 'Ramazan Bayramı arifesi', halfDay: true },
  { date: '2027-03-09', name: 'Ramazan Bayramı 1. gün', halfDay: false },
  { date: '2027-03-10', name: 'Ramazan Bayramı 2. gün', halfDay: false },
  { date: '2027-03-11', name: 'Ramazan Bayramı 3. gün', halfDay: false },
  { date: '2027-04-23', name: 'Ulusal Egemenlik ve Çocuk Bayramı', halfDay: false },
  { date: '2027-05-01', name: 'Emek ve Dayanışma Günü', halfDay: false },
  { date: '2027-05-15', name: 'Kurban Bayramı arifesi', halfDay: true },
  { date: '2027-05-16', name: 'Kurban Bayramı 1. gün', halfDay: false },
  { date: '2027-05-17', name: 'Kurban Bayramı 2. gün', halfDay: false },
  { date: '2027-05-18', name: 'Kurban Bayramı 3. gün', halfDay: false },
  {
    date: '2027-05-19',
    name: "Kurban Bayramı 4. gün; Atatürk'ü Anma, Gençlik ve Spor Bayramı",
    halfDay: false,
  },
  { date: '2027-07-15', name: 'Demokrasi ve Millî Birlik Günü', halfDay: false },
  { date: '2027-08-30', name: 'Zafer Bayramı', halfDay: false },
  { date: '2027-10-28', name: 'Cumhuriyet Bayramı arifesi', halfDay: true },
  { date: '2027-10-29', name: 'Cumhuriyet Bayramı', halfDay: false },
]
