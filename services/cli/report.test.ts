import { assert, describe, it } from "@effect/vitest"
import { commandName, failureLine } from "./report.ts"

describe("CLI failure reports", () => {
  it("name the command the arguments select", () => {
    assert.strictEqual(commandName(["probe", "--type", "aws", "https://x"]), "statusgrid probe")
    assert.strictEqual(commandName(["org", "plan", "acme", "pro"]), "statusgrid org plan")
    assert.strictEqual(commandName(["bench", "--help"]), "statusgrid bench")
    assert.strictEqual(commandName(["--verbose"]), "statusgrid")
    assert.strictEqual(commandName([]), "statusgrid")
  })

  it("say what failed and what to do, in one line", () => {
    const tagged = { _tag: "AdapterError", message: "the body is not valid JSON\n(68 bytes)." }
    assert.strictEqual(
      failureLine("statusgrid probe", tagged),
      "statusgrid probe failed: the body is not valid JSON (68 bytes) [AdapterError]. The page is not what that provider type serves: try another --type, or none to detect it."
    )
    // No message of its own: the operation and its cause's.
    const bus = { _tag: "BusError", operation: "connect", cause: new Error("Connection is closed.") }
    assert.match(failureLine("statusgrid start", bus), /^statusgrid start failed: connect: Connection is closed \[BusError\]\. Check that Redis/)
    assert.strictEqual(failureLine("statusgrid x", new Error("boom")), "statusgrid x failed: boom. Run it again with --verbose for details.")
    assert.notInclude(failureLine("statusgrid x", tagged), "\n")
  })
})
