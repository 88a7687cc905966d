// Files: uploads (dispute evidence) and files the platform renders, in the merchant's scope.
export { filesRoutes } from './files.http.ts'
export { parseUploadForm, uploadFileName } from './files.multipart.ts'
export {
  FILE_SIZE_MAX_BYTES,
  getFileContents,
  getFiles,
  storeFile,
  uploadFile,
  type StoredFile,
} from './files.service.ts'
