// Files: uploads (dispute evidence) and files the platform renders, in the merchant's scope.
export { filesRoutes } from './files.http.ts'
export { getFiles, storeFile } from './files.service.ts'
