import v8 from "node:v8";
import vm from "node:vm";

export type Collect = (options: { type: "minor" | "major"; execution: "sync" | "async" }) => void;

/**
 * V8's `gc` function, which V8 gives every context made while `--expose-gc` is set; the flag is
 * unset again at once, so that no other context gets it.
 */
export function exposedCollector(): Collect {
  v8.setFlagsFromString("--expose-gc");
  try {
    return vm.runInNewContext("gc") as Collect;
  } finally {
    v8.setFlagsFromString("--no-expose-gc");
  }
}
