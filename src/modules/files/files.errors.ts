import { errorFactory, type ErrorTable } from '../../platform/errors.ts'

export type FilesErrorCode = 'file_not_found' | 'file_too_large' | 'file_type_unsupported'

const table: ErrorTable<FilesErrorCode> = {
  file_not_found: { code: 'SVC-RES-3301', status: 404, message: 'file not found' },
  file_too_large: { code: 'SVC-VAL-3003', status: 413, message: 'file is larger than 5 MiB' },
  file_type_unsupported: {
    code: 'SVC-VAL-3001',
    status: 400,
    message: 'file: must be a PDF, PNG or JPEG (read from its content)',
  },
}

export const filesError = errorFactory(table)
