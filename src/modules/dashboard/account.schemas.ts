import { Type } from 'typebox'

// The account forms' inputs (page rules, page-rules.ts). A new password's length is the
// service's rule (team.service.ts checkNewPassword, shared with invitations); here only bounds.

const Password = Type.String({ minLength: 1, maxLength: 200 })
const Email = Type.String({ format: 'email', maxLength: 254 })

export const ForgotPasswordBody = Type.Object({ email: Email }, { additionalProperties: false })

export const ResetPasswordBody = Type.Object(
  { password: Password, passwordConfirm: Password },
  { additionalProperties: false },
)

export const ChangePasswordBody = Type.Object(
  { currentPassword: Password, password: Password, passwordConfirm: Password },
  { additionalProperties: false },
)

export const ChangeEmailBody = Type.Object(
  { email: Email, currentPassword: Password },
  { additionalProperties: false },
)

/** Confirming an email change: the link's token is the whole input. */
export const ConfirmEmailBody = Type.Object({}, { additionalProperties: false })
