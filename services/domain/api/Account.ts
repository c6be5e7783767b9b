import { Schema } from "effect"
import { noNul } from "../Text.ts"
import { Email } from "./Members.ts"

/** Password rules: 10 to 200 characters (code points); nothing else imposed (NIST SP 800-63B). */
export const passwordLength = { min: 10, max: 200 } as const

const Password = Schema.String.check(
  Schema.makeFilter((s: string) => {
    const n = [...s].length
    return n >= passwordLength.min && n <= passwordLength.max ||  `must be ${passwordLength.min} to ${passwordLength.max} characters`
  })
)

const PersonName = Schema.Trim.check(Schema.isBetweenLength(1, 200, { message: "must be 1 to 200 characters" }), noNul)

/** Sign-up with e-mail and password (portal form; identity/Users.ts `signUp` enforces the same rules). */
export const SignUp = Schema.Struct({ name: PersonName, email: Email, password: Password }).annotate({ identifier: "SignUp" })
export type SignUp = typeof SignUp.Type

/** Sign-in: any non-empty password (a wrong one is a 401, not a field error). */
export const SignIn = Schema.Struct({
  email: Email,
  password: Schema.String.check(Schema.isMinLength(1, { message: "is required" }))
}).annotate({ identifier: "SignIn" })
export type SignIn = typeof SignIn.Type

/** The pattern of an organization's slug (organizations.slug). */
export const organizationSlugPattern = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/

/** A new organization: a display name and the slug its URLs use. */
export const OrganizationCreate = Schema.Struct({
  name: PersonName,
  slug: Schema.Trim.check(Schema.isPattern(organizationSlugPattern, { message: "must be 1-63 lower-case letters, digits or inner hyphens" }))
}).annotate({ identifier: "OrganizationCreate" })
export type OrganizationCreate = typeof OrganizationCreate.Type

/** The profile's name (portal `/profile`; identity/Users.ts `rename` enforces the same rule). */
export const ProfileName = Schema.Struct({ name: PersonName }).annotate({ identifier: "ProfileName" })

/** A password change: the current password (a wrong one is a field error) and the new one, under the sign-up rules. */
export const PasswordChange = Schema.Struct({
  current_password: Schema.String.check(Schema.isMinLength(1, { message: "is required" })),
  new_password: Password
}).annotate({ identifier: "PasswordChange" })
