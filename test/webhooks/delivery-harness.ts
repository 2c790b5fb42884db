import { loadConfig } from "../../src/config.ts";
import { startNotifications } from "../../src/notifications/notifications.ts";
import type { HostLookup } from "../../src/webhooks/address-guard.ts";
import { buildTestApp, createTenant, testDatabase } from "../helpers.ts";
import { apiOf } from "./webhook-fixtures.ts";

const silentLog = { warn() {}, error() {} };

/** Names the tests resolve themselves: the system resolver is never asked. */
export const TEST_NAMES: Record<string, string[]> = {
  "receiver.test": ["127.0.0.1"],
};
const testLookup: HostLookup = async (hostname) => TEST_NAMES[hostname] ?? [];

export interface DeliveryAppOptions {
  allowPrivateNetworks: boolean;
  /** The schedule's waits, shortened by configuration as an operator would. */
  retryDelaysSeconds: number[];
}

/**
 * The app with the job engine and this instance's workers running on the test store: the intake
 * enqueues events, the API enqueues test events and redeliveries, and attempts go out for real.
 */
export async function startDeliveryApp(options: DeliveryAppOptions) {
  const db = await testDatabase();
  const config = {
    ...loadConfig({}),
    webhookAllowPrivateNetworks: options.allowPrivateNetworks,
    deliveryRetryDelaysSeconds: options.retryDelaysSeconds,
    // Each test creates a few forms and submits to them from one address.
    intakeRateLimitMax: 1_000,
  };
  const notifications = await startNotifications({
    db,
    config,
    log: silentLog,
    webhookLookup: testLookup,
  });
  const testApp = await buildTestApp(config, {
    events: notifications.events,
    deliveryQueue: notifications.deliveryQueue,
  });
  return {
    app: testApp.app,
    async tenant() {
      const tenant = await createTenant();
      return apiOf(testApp.app, tenant.fullKey);
    },
    async close() {
      await testApp.close();
      await notifications.stop(2_000);
    },
  };
}

export type DeliveryApp = Awaited<ReturnType<typeof startDeliveryApp>>;

/** What `check` answers once it answers something, polling; fails after `timeoutMs`. */
export async function waitFor<T>(
  check: () => Promise<T | null | undefined>,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value !== null && value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`nothing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}
