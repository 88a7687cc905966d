// Customers and their saved cards. Other modules import only this file.
export { customersRoutes } from './customers.http.ts'
export {
  assertCustomerExists,
  customerEmails,
  getCustomer,
  listCustomers,
} from './customers.service.ts'
export type { Customer } from './customers.service.ts'
export {
  attachCardToCustomer,
  detachCard,
  getDefaultCard,
  listCards,
} from './customer-cards.service.ts'
export type { CustomerCard } from './customer-cards.service.ts'
