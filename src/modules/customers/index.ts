// Customers and their saved cards. Other modules import only this file.
export { customersRoutes } from './customers.http.ts'
export {
  assertCustomerExists,
  customerEmails,
  getCustomer,
  listCustomers,
} from './customers.service.ts'
export { attachCardToCustomer, getDefaultCard } from './customer-cards.service.ts'
export type { CustomerCard } from './customer-cards.service.ts'
