// What publishing a streamed block costs in the web chat's hub (numbering, bounded backlog, fan-out to the
// subscribers' frame writers), against a baseline of serialising the same events with JSON.stringify alone.
import { defineSuite } from "@agent-kernel/bench";
import { ConversationHub, sseFrame } from "../src/index.ts";

const EVENTS = 5000;
const SUBSCRIBERS = 4;
const text = "A streamed block of a reply, about a sentence or two long, as the block chunker emits it.";

export default defineSuite({
  name: `publish ${EVENTS} blocks to ${SUBSCRIBERS} subscribers`,
  baseline: "JSON.stringify only",
  iterations: 10,
  itemsPerIteration: EVENTS,
  cases: [
    {
      name: "JSON.stringify only",
      run: () => {
        let size = 0;
        for (let i = 0; i < EVENTS; i++)
          size += JSON.stringify({ messageId: `b-${i}`, text }).length * SUBSCRIBERS;
        return size;
      },
    },
    {
      name: "hub publish + SSE frames",
      before: () => {
        const hub = new ConversationHub({ backlogSize: 200 });
        let size = 0;
        for (let s = 0; s < SUBSCRIBERS; s++)
          hub.subscribe("conv", (event) => {
            size += sseFrame(event).length;
          });
        return { hub, size: () => size };
      },
      run: ({ hub }: { hub: ConversationHub }) => {
        for (let i = 0; i < EVENTS; i++) hub.publish("conv", "block", { messageId: `b-${i}`, text });
      },
    },
  ],
});
