// The bank simulators' test credentials, as each bank issues them (field names from CONTRACT
// § "Bank virtual POS accounts"). A simulator started with one of these checks the hashes and
// MACs a connector computes from the same object, so any test may use them as its POS's.
export const EST_TEST = {
  clientId: '700655000200',
  username: 'ISBANKAPI',
  password: 'ISB-7',
  storeKey: 'TRPS0200',
}

export const GARANTI_TEST = {
  merchantId: '7000679',
  terminalId: '30691298',
  provisionUser: 'PROVAUT',
  provisionPassword: '123qweASD/',
  storeKey: '12345678',
}

export const POSNET_TEST = {
  merchantId: '6706598320',
  terminalId: '67005551',
  posnetId: '27426',
  encKey: '10,10,10,10,10,10,10,10',
}
