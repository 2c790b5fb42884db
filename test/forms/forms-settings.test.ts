import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { buildTestApp, closeTestDatabase, createTenant } from "../helpers.ts";
import {
  assertCreateRefused,
  assertUpdateRefused,
  type Body,
  type Client,
  client,
  DEFAULTS,
  unprocessable,
} from "./form-fixtures.ts";

/** The members submissions.md section 1 makes writable on create and update. */
const FIELD = {
  id: "email",
  label: "Your email",
  type: "email",
  subtype: "email",
  required: true,
  showDescription: false,
  description: "",
  ratingCount: 5,
  scaleMin: 1,
  scaleMax: 5,
  minLabel: "",
  maxLabel: "",
  options: [],
  logic: { rules: [] },
};

const SECTION_1: Body = {
  fields: [FIELD],
  submitButtonText: "Send it",
  pageMode: "full",
  headerTitle: "Contact",
  headerDescription: "Write to us",
  headerImage: "https://cdn.example.com/header.png",
  logo: "https://cdn.example.com/logo.svg",
  accentColor: "#AbC",
  backgroundColor: "#fafafa",
  textColor: "#111",
  buttonBackgroundColor: "#123456",
  buttonTextColor: "#FFF",
  buttonBorderStyle: "full",
  inputBorderStyle: "flat",
  showCustomClosedMessage: true,
  closeMessageTitle: "Closed",
  closeMessageDescription: "See you next year",
  ipBlacklist: "203.0.113.7, 198.51.100.0/24,2001:db8::/32 , ::ffff:192.0.2.1",
  imageCompressionType: ["webp", "png"],
  disableEmailDataCensoring: true,
  allowedDomains: " Example.com ,*.shop.test, localhost",
};

const COLOR = "must be a color in the form #rgb or #rrggbb";
const HTTPS = "must be an absolute https URL";
const domains = (n: number) => Array.from({ length: n }, (_, i) => `d${i}.example.com`).join(",");
const addresses = (n: number) =>
  Array.from({ length: n }, (_, i) => `10.${i >> 8}.${i & 255}.1`).join(", ");

/** [member and value, expected message]: refused on create and update alike. */
const REFUSED: [Body, string][] = [
  [{ headerImage: "http://cdn.example.com/a.png" }, `headerImage: ${HTTPS}`],
  [{ logo: "javascript:alert(1)" }, `logo: ${HTTPS}`],
  [{ logo: "/logo.png" }, `logo: ${HTTPS}`],
  [{ accentColor: "blue" }, `accentColor: ${COLOR}`],
  [{ backgroundColor: "" }, `backgroundColor: ${COLOR}`],
  [{ textColor: "#12345" }, `textColor: ${COLOR}`],
  [{ buttonBackgroundColor: "#1234567" }, "buttonBackgroundColor: must be at most 7 characters"],
  [{ buttonTextColor: "#xyz" }, `buttonTextColor: ${COLOR}`],
  [{ buttonBorderStyle: "round" }, "buttonBorderStyle: must be one of full, flat, rounded"],
  [{ inputBorderStyle: null }, "inputBorderStyle: must be a string"],
  [{ pageMode: "wide" }, "pageMode: must be one of compact, full"],
  [{ showCustomClosedMessage: "yes" }, "showCustomClosedMessage: must be a boolean"],
  [{ disableEmailDataCensoring: 0 }, "disableEmailDataCensoring: must be a boolean"],
  [{ imageCompressionType: ["gif"] }, "imageCompressionType[0]: must be one of webp, jpeg, png"],
  [{ imageCompressionType: ["png", "png"] }, "imageCompressionType: must not repeat an item"],
  [{ submitButtonText: "x".repeat(201) }, "submitButtonText: must be at most 200 characters"],
  [{ fields: {} }, "fields: must be an array"],
  [{ fields: [{ ...FIELD, extra: 1 }] }, "fields[0].extra: is not allowed"],
  [{ fields: [{ ...FIELD, required: "yes" }] }, "fields[0].required: must be a boolean"],
  [
    { fields: Array.from({ length: 201 }, (_, i) => ({ ...FIELD, id: `f${i}` })) },
    "fields: must have at most 200 items",
  ],
  [
    { allowedDomains: "https://example.com" },
    'allowedDomains: "https://example.com" is not a host name (no scheme, port or path; *.example.com for subdomains; xn-- for international names)',
  ],
  [
    { allowedDomains: "example.com:8080" },
    'allowedDomains: "example.com:8080" is not a host name (no scheme, port or path; *.example.com for subdomains; xn-- for international names)',
  ],
  [
    { allowedDomains: "a.com,,b.com" },
    "allowedDomains: must be host names separated by commas, with no empty entry",
  ],
  [{ allowedDomains: domains(101) }, "allowedDomains: must have at most 100 host names"],
  [
    { ipBlacklist: "203.0.113.300" },
    'ipBlacklist: "203.0.113.300" is not an IP address or CIDR range',
  ],
  [{ ipBlacklist: "10.0.0.0/33" }, 'ipBlacklist: "10.0.0.0/33" is not an IP address or CIDR range'],
  [{ ipBlacklist: "127.1" }, 'ipBlacklist: "127.1" is not an IP address or CIDR range'],
  [
    { ipBlacklist: "fe80::1%eth0" },
    'ipBlacklist: "fe80::1%eth0" is not an IP address or CIDR range',
  ],
  [
    { ipBlacklist: "2001:db8::/129" },
    'ipBlacklist: "2001:db8::/129" is not an IP address or CIDR range',
  ],
  [
    { ipBlacklist: "10.0.0.1," },
    "ipBlacklist: must be IP addresses or CIDR ranges separated by commas, with no empty entry",
  ],
  [{ ipBlacklist: addresses(1001) }, "ipBlacklist: must have at most 1000 addresses or ranges"],
];

let api: Client;
let close: () => Promise<void>;

before(async () => {
  const built = await buildTestApp();
  close = built.close;
  api = client(built.app, (await createTenant("paid")).fullKey);
});

after(async () => {
  await close();
  await closeTestDatabase();
});

describe("section 1 settings", () => {
  test("accepted on create, stored and returned exactly as sent", async () => {
    const created = await api.createOk({ name: "settings", ...SECTION_1 });
    assert.deepEqual(created, {
      ...DEFAULTS,
      ...SECTION_1,
      name: "settings",
      id: created.id,
      organizationId: created.organizationId,
      createdAt: created.createdAt,
      updatedAt: created.updatedAt,
    });
    assert.deepEqual(await api.getOk(created.id), created);
  });

  test("accepted on update, the same way", async () => {
    const form = await api.createOk({ name: "settings update" });
    const updated = await api.updateOk(form.id, SECTION_1);
    assert.deepEqual(updated, { ...form, ...SECTION_1, updatedAt: updated.updatedAt });
    assert.deepEqual(await api.getOk(form.id), updated);
  });

  test("an empty string is no rule; 100 domains and 1,000 addresses are accepted", async () => {
    const lists = {
      allowedDomains: domains(100),
      ipBlacklist: addresses(1000),
      headerImage: "",
      logo: "",
    };
    const form = await api.createOk({ name: "lists", ...lists });
    assert.deepEqual(
      [form.allowedDomains, form.ipBlacklist, form.headerImage, form.logo],
      Object.values(lists),
    );
    const cleared = await api.updateOk(form.id, { allowedDomains: "", ipBlacklist: " " });
    assert.deepEqual([cleared.allowedDomains, cleared.ipBlacklist], ["", " "]);
  });

  test("allowedCountries: ISO 3166-1 alpha-2 codes, any case, on update only", async () => {
    const form = await api.createOk({ name: "countries" });
    const updated = await api.updateOk(form.id, { allowedCountries: "DE,fr , Gb" });
    assert.equal(updated.allowedCountries, "DE,fr , Gb");
    for (const [value, message] of [
      ["DE,XX", 'allowedCountries: "XX" is not an ISO 3166-1 alpha-2 country code'],
      ["DEU", 'allowedCountries: "DEU" is not an ISO 3166-1 alpha-2 country code'],
      ["UK", 'allowedCountries: "UK" is not an ISO 3166-1 alpha-2 country code'],
      ["DE,", "allowedCountries: must be country codes separated by commas, with no empty entry"],
    ] as const) {
      await assertUpdateRefused(api, form.id, { allowedCountries: value }, unprocessable(message));
    }
    await assertCreateRefused(
      api,
      { name: "x", allowedCountries: "DE" },
      unprocessable("allowedCountries: is not allowed"),
    );
  });

  const form = { id: "" };
  before(async () => {
    form.id = (await api.createOk({ name: "refusals" })).id;
  });
  for (const [body, message] of REFUSED) {
    test(`refused: ${JSON.stringify(body).slice(0, 70)}`, async () => {
      await assertCreateRefused(api, { name: "x", ...body }, unprocessable(message));
      await assertUpdateRefused(api, form.id, body, unprocessable(message));
    });
  }
});
