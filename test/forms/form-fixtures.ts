import assert from "node:assert/strict";
import { type buildTestApp, createTenant } from "../helpers.ts";

export type App = Awaited<ReturnType<typeof buildTestApp>>["app"];
// biome-ignore lint/suspicious/noExplicitAny: response bodies are compared whole with deepEqual.
export type Body = Record<string, any>;
export interface Answer {
  status: number;
  body: Body;
  text: string;
  headers: Record<string, unknown>;
}

/**
 * The full record of a new form, written out from decisions.md's "Defaults on create" table
 * (not imported from src/, so that a wrong default in the code fails the tests).
 */
export const DEFAULTS = Object.freeze({
  type: "endpoint",
  isClosed: false,
  removeServiceBranding: false,
  sendEmailNotifications: true,
  emailsToNotify: [],
  submissionStorageDuration: "365",
  sendRespondentEmailNotifications: false,
  respondentEmailFromName: "",
  respondentEmailSubject: "",
  respondentEmailMessageHTML: "",
  submitButtonText: "Submit",
  limitResponses: false,
  maxResponses: null,
  autoCloseEnabled: false,
  autoCloseDate: "",
  autoCloseTime: "",
  autoCloseTimezone: "",
  useCustomRedirect: false,
  customSuccessUrl: "",
  webhookEnabled: false,
  webhookUrl: "",
  customHoneypot: "",
  providerCaptchaEnabled: false,
  captchaProvider: "turnstile",
  captchaSiteKey: "",
  allowedDomains: "",
  allowedCountries: "",
  fields: [],
  accentColor: "#030712",
  backgroundColor: "#ffffff",
  buttonBackgroundColor: "#030712",
  buttonBorderStyle: "rounded",
  buttonTextColor: "#ffffff",
  closeMessageTitle: "",
  closeMessageDescription: "",
  showCustomClosedMessage: false,
  headerTitle: "",
  headerDescription: "",
  headerImage: "",
  seoTitle: "",
  seoDescription: "",
  seoImage: "",
  inputBorderStyle: "rounded",
  logo: "",
  pageMode: "compact",
  saveAnswers: true,
  textColor: "#000000",
  useCustomThankYouPage: false,
  tpBackgroundColor: "#ffffff",
  tpButtonColor: "#030712",
  tpButtonBackgroundColor: "#f3f4f6",
  tpButtonText: "",
  tpButtonUrl: "",
  tpHeader: "",
  tpMessage: "",
  tpTextColor: "#030712",
  ipBlacklist: "",
  imageCompressionType: [],
  disableEmailDataCensoring: false,
});

/** ISO 8601, UTC, with milliseconds. */
export const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The full record a create of `body` should answer with, given the server-made members. */
export function expectedForm(created: Body, body: Body, organizationId: string): Body {
  const { providerCaptchaSecretKey: _secret, ...written } = body;
  return {
    ...DEFAULTS,
    ...written,
    id: created.id,
    organizationId,
    createdAt: created.createdAt,
    updatedAt: created.updatedAt,
  };
}

/** The list item of a full record, as the spec's list-item table has it. */
export const listItemOf = (form: Body) => ({
  id: form.id,
  name: form.name,
  type: form.type,
  createdAt: form.createdAt,
  updatedAt: form.updatedAt,
  imageCompressionType: form.imageCompressionType,
  isClosed: form.isClosed,
  submissions: 0,
  organizationId: form.organizationId,
});

export const errorOf = (code: string, message: string) => ({ error: { code, message } });
export const unprocessable = (message: string) => errorOf("unprocessable_entity", message);
export const NOT_FOUND = errorOf("not_found", "form: not found");

/** A valid id of our format that names no form. */
export const MISSING_ID = "form_AAAAAAAAAAAAAAAAAAAAAA";

/** Requests as one key, through `app.inject`. Objects are sent as JSON; strings verbatim. */
export function client(app: App, key: string) {
  async function call(method: "GET" | "POST" | "PATCH", url: string, payload?: unknown) {
    const res = await app.inject({
      method,
      url: `/api/v1${url}`,
      headers: {
        "api-key": key,
        ...(payload !== undefined && { "content-type": "application/json" }),
      },
      ...(payload !== undefined && {
        payload: typeof payload === "string" ? payload : JSON.stringify(payload),
      }),
    });
    return {
      status: res.statusCode,
      body: res.json() as Body,
      text: res.body,
      headers: res.headers,
    } satisfies Answer;
  }
  const api = {
    create: (body: unknown) => call("POST", "/forms", body),
    get: (id: string) => call("GET", `/forms/${encodeURIComponent(id)}`),
    update: (id: string, body: unknown) => call("PATCH", `/forms/${encodeURIComponent(id)}`, body),
    list: (query = "") => call("GET", `/forms${query}`),
    async total(): Promise<number> {
      const res = await api.list("?pageSize=1");
      assert.equal(res.status, 200);
      return res.body.meta.total;
    },
    /** Creates a form and returns its record, failing the test unless the answer is 201. */
    async createOk(body: Body = { name: "a form" }): Promise<Body> {
      const res = await api.create(body);
      assert.equal(res.status, 201, res.text);
      return res.body;
    },
    async getOk(id: string): Promise<Body> {
      const res = await api.get(id);
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    async updateOk(id: string, body: Body): Promise<Body> {
      const res = await api.update(id, body);
      assert.equal(res.status, 200, res.text);
      return res.body;
    },
    /** The list item of `id` on the first page of a search by `name`, or undefined. */
    async listed(id: string, name: string): Promise<Body | undefined> {
      const res = await api.list(`?search=${encodeURIComponent(name)}&pageSize=100`);
      assert.equal(res.status, 200, res.text);
      return res.body.data.find((item: Body) => item.id === id);
    },
  };
  return api;
}

export type Client = ReturnType<typeof client>;

/** Clients of a new free organization and of a new paid one, for tests of the plans. */
export async function freeAndPaidClients(app: App) {
  const free = await createTenant("free");
  const paid = await createTenant("paid");
  return {
    free: client(app, free.fullKey),
    paid: client(app, paid.fullKey),
    freeOrg: free.org.id,
    paidOrg: paid.org.id,
  };
}

/** A create that must be refused with `expected`, leaving the organization's forms as they were. */
export async function assertCreateRefused(
  api: Client,
  body: unknown,
  expected: Body,
  status = 422,
) {
  const before = await api.total();
  const res = await api.create(body);
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: expected });
  assert.equal(await api.total(), before, "a refused create must not store a form");
}

/** An update that must be refused with `expected`, leaving the form exactly as it was. */
export async function assertUpdateRefused(
  api: Client,
  id: string,
  body: unknown,
  expected: Body,
  status = 422,
) {
  const before = await api.getOk(id);
  const res = await api.update(id, body);
  assert.deepEqual({ status: res.status, body: res.body }, { status, body: expected });
  assert.deepEqual(await api.getOk(id), before, "a refused update must not change the form");
}

/** Asserts that `answer` nowhere carries the captcha secret, neither as a member nor as text. */
export function assertNoSecret(answer: Answer, secret: string) {
  assert.ok(!answer.text.includes(secret), "the captcha secret must never be returned");
  assert.ok(!answer.text.includes("providerCaptchaSecretKey"), "no secret member in responses");
}

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
