import { describe, expect, it } from "vitest"
import { sessionTokenFrom, sessionCookieName } from "./SessionCookie.ts"

const token = "A".repeat(20) + "b_c-" + "9".repeat(19)

describe("session cookie", () => {
  it("is sg_session", () => expect(sessionCookieName).toBe("sg_session"))

  it("reads the token among other cookies, with spaces or quotes", () => {
    expect(sessionTokenFrom(`sg_session=${token}`)).toBe(token)
    expect(sessionTokenFrom(`theme=dark; sg_session=${token}; lang=en`)).toBe(token)
    expect(sessionTokenFrom(`theme=dark;sg_session="${token}"`)).toBe(token)
    expect(sessionTokenFrom(`x_sg_session=nope; sg_session=${token}`)).toBe(token)
  })

  it("absent, empty or malformed: undefined", () => {
    for (const header of [undefined, null, "", "theme=dark", "sg_session=", "sg_session=short", `sg_session=${token};x`.replace(token, "has space " + token), `sg_session=${"a".repeat(300)}`]) {
      expect(sessionTokenFrom(header)).toBeUndefined()
    }
  })
})
