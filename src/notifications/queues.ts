/** The job engine's queues of notifications: every instance creates them at start. */
export const EMAIL_QUEUE = "email-delivery";

export const WEBHOOK_QUEUE = "webhook-delivery";

export const NOTIFICATION_QUEUES: readonly string[] = [EMAIL_QUEUE, WEBHOOK_QUEUE];
