import { spawn } from "node:child_process";

const COMMAND = {hook_argv};

export const FunesMemory = async () => ({
  event: async ({ event }) => {
    if (event?.type !== "session.idle") return;
    const id = event.properties?.sessionID;
    if (typeof id !== "string" || !/^ses_[A-Za-z0-9]+$/.test(id)) return;
    try {
      const stdio = ["pipe", "ignore", "ignore"];
      const child = spawn(COMMAND[0], COMMAND.slice(1), { detached: true, stdio });
      child.on("error", () => {});
      child.stdin.on("error", () => {});
      child.stdin.end(JSON.stringify({ hook_event_name: "session.idle", session_id: id }));
      child.unref();
    } catch {
      // funes must never disturb OpenCode: a missing funes only loses this turn's capture.
    }
  },
});
