import { assert, describe, it } from "@effect/vitest"
import { decodeText, xmlDeclaredEncoding } from "./text.ts"

const bytes = (...values: ReadonlyArray<number>) => new Uint8Array(values)
const ascii = (text: string) => new TextEncoder().encode(text)

describe("decodeText", () => {
  it("honours a byte-order mark before any declared charset", () => {
    assert.strictEqual(decodeText(bytes(0xef, 0xbb, 0xbf, 0xc3, 0xa9), "text/xml; charset=windows-1252"), "é")
    assert.strictEqual(decodeText(bytes(0xff, 0xfe, 0xe9, 0x00)), "é")
    assert.strictEqual(decodeText(bytes(0xfe, 0xff, 0x00, 0xe9)), "é")
  })

  it("decodes by the Content-Type charset: legacy single-byte sets, and UTF-16 in either byte order", () => {
    assert.strictEqual(decodeText(bytes(0x92, 0xe9), "text/plain; charset=windows-1252"), "’é")
    assert.strictEqual(decodeText(bytes(0x92, 0xe9), "text/plain;charset=ISO-8859-1"), "’é")
    assert.strictEqual(decodeText(bytes(0xe9, 0x00), "application/json; charset=utf-16"), "é")
    assert.strictEqual(decodeText(bytes(0x00, 0xe9), "application/json; charset=UTF-16"), "é")
    assert.strictEqual(decodeText(bytes(0x00, 0xe9), "application/json; charset=utf-16be"), "é")
  })

  it("decodes by an XML declaration when the Content-Type names no charset", () => {
    const doc = [...ascii(`<?xml version="1.0" encoding="windows-1252"?><t>`), 0x92, ...ascii("</t>")]
    assert.strictEqual(decodeText(new Uint8Array(doc), "application/xml"), `<?xml version="1.0" encoding="windows-1252"?><t>’</t>`)
    assert.strictEqual(decodeText(new Uint8Array(doc), "application/xml; charset=utf-8"), `<?xml version="1.0" encoding="windows-1252"?><t>\ufffd</t>`)
  })

  it("reads UTF-8 for an unknown charset, a replaced one, and an ASCII document declaring UTF-16", () => {
    const e = bytes(0xc3, 0xa9)
    assert.strictEqual(decodeText(e, "text/plain; charset=klingon"), "é")
    assert.strictEqual(decodeText(e, "text/plain; charset=iso-2022-kr"), "é")
    assert.strictEqual(decodeText(new Uint8Array([...ascii(`<?xml version="1.0" encoding="UTF-16"?><t>`), ...e])), `<?xml version="1.0" encoding="UTF-16"?><t>é`)
  })
})

describe("xmlDeclaredEncoding", () => {
  it("reads the encoding of a leading XML declaration only", () => {
    assert.strictEqual(xmlDeclaredEncoding(ascii(`<?xml version="1.0" encoding="Windows-1252"?><rss/>`)), "windows-1252")
    assert.strictEqual(xmlDeclaredEncoding(ascii(`\n <?xml version='1.0' encoding='iso-8859-1' standalone='yes'?>`)), "iso-8859-1")
    assert.isNull(xmlDeclaredEncoding(ascii(`<?xml version="1.0"?><rss/>`)))
    assert.isNull(xmlDeclaredEncoding(ascii(`<rss><?xml version="1.0" encoding="windows-1252"?></rss>`)))
    assert.isNull(xmlDeclaredEncoding(ascii(`{"encoding": "windows-1252"}`)))
  })
})
