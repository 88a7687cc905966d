export { operatorRoutes } from './operator.http.ts'
