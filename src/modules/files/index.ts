// Files: uploads (dispute evidence) and files the platform renders, in the merchant's scope.
export { filesRoutes } from './files.http.ts'
export { getFile, getFiles, storeFile, FILE_SIZE_MAX_BYTES } from './files.service.ts'
export type { StoredFile } from './files.service.ts'
export type { FilePurpose, FileType } from './files.table.ts'
