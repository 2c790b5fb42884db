import assert from "node:assert/strict";
import { test } from "node:test";
import { countryOfAddress, createCountryResolver } from "../../src/intake/country-resolver.ts";

// Addresses whose blocks are registered to one country in the pinned database: Google's public
// DNS (US), heise.de (DE), a Google address in Ireland (IE).
test("addresses are looked up in the offline database, IPv4, IPv6 and IPv4-mapped IPv6", () => {
  assert.equal(countryOfAddress("8.8.8.8"), "US");
  assert.equal(countryOfAddress("193.99.144.80"), "DE");
  assert.equal(countryOfAddress("::ffff:193.99.144.80"), "DE");
  assert.equal(countryOfAddress("::FFFF:193.99.144.80"), "DE");
  assert.equal(countryOfAddress("2a00:1450:4001:82a::200e"), "IE");
});

test("private, loopback, reserved and malformed addresses have no country", () => {
  for (const ip of [
    "127.0.0.1",
    "10.1.2.3",
    "192.168.0.1",
    "::1",
    "fd00::1",
    "",
    "not-an-ip",
    "1.2.3",
  ]) {
    assert.equal(countryOfAddress(ip), null, ip);
  }
});

test("without a country header, the address decides", () => {
  const resolver = createCountryResolver(null);
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": "FR" }), "DE");
});

test("a configured header decides when present: upper-cased, XX and malformed values unknown", () => {
  const resolver = createCountryResolver("cf-ipcountry");
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": "fr" }), "FR");
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": "XX" }), null);
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": "FRA" }), null);
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": "" }), null);
  assert.equal(resolver.countryOf("193.99.144.80", { "cf-ipcountry": ["FR", "DE"] }), null);
  assert.equal(resolver.countryOf("193.99.144.80", {}), "DE");
  assert.equal(resolver.countryOf("127.0.0.1", {}), null);
});
