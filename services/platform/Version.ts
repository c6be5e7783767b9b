import pkg from "../../package.json" with { type: "json" }

/** The running statusgrid version, from package.json. */
export const version: string = pkg.version
