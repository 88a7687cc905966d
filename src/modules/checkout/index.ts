// The hosted checkout: the buyer's pages (/s/{id}, the sandbox ACS /3ds/{paymentId}) and
// their browser API (/v1/public/sessions/{id}...). Other modules import only this file.
export { checkoutPublicRoutes, checkoutSandboxRoutes } from './checkout.http.ts'
export { checkoutPagesRoutes } from './checkout-pages.http.ts'
export { checkoutReconcilers } from './checkout.jobs.ts'
