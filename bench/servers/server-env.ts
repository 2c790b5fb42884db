/** The bench passes everything a server needs in its environment; a missing value is its bug. */
export function requiredEnv(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} must be set`);
  return value;
}

export const listenAddress = () => ({
  port: Number(requiredEnv("PORT")),
  host: requiredEnv("HOST"),
});
