// Preloaded (`--import`) into every process the bench starts, which it starts with an IPC
// channel: when the bench dies without stopping it (SIGKILL, a crash), the channel closes and the
// child exits instead of lingering as an orphan server on a loopback port.
process.on("disconnect", () => process.exit(1));
