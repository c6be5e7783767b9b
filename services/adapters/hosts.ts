/** Whether `hostname` is `domain` or one of its subdomains (parsed hostnames only, never substrings of a URL). */
export const hostIs = (hostname: string, domain: string): boolean => hostname === domain || hostname.endsWith(`.${domain}`)
