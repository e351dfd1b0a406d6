import { randomUUID } from 'node:crypto';
import { setMaxListeners } from 'node:events';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { servePeer } from './peer-process';

/*
 * LangGraph.js with its Postgres checkpointer and `durability: "sync"`: each super-step's writes and
 * checkpoint are committed before the next super-step runs. A chain is one node per super-step; a fan
 * is one super-step of `steps` nodes started from START together (LangGraph's own parallelism: each
 * node's writes are saved, then one checkpoint for the super-step).
 */

// Every node of a fan listens on the run's abort signal: 50 of them are expected, not a leak.
setMaxListeners(200);

// Each node adds 1, so every step leaves a write behind (a node returning nothing would leave none).
const State = Annotation.Root({
  done: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
});
const step = (): typeof State.Update => ({ done: 1 });

/** A compiled graph of no-op nodes named `names`, joined by `edges`. */
function compile(names: string[], edges: Array<[string, string]>, checkpointer: PostgresSaver) {
  const graph = new StateGraph(State).addNode(names.map((n): [string, typeof step] => [n, step]));
  for (const [from, to] of edges) graph.addEdge(from, to);
  return graph.compile({ checkpointer });
}

function shapeOf(shape: 'chain' | 'fan', steps: number): { names: string[]; edges: Array<[string, string]> } {
  if (shape === 'chain') {
    const names = Array.from({ length: steps }, (_, i) => `s${i}`);
    const path = [START, ...names, END];
    return { names, edges: path.slice(1).map((to, i): [string, string] => [path[i], to]) };
  }
  const names = Array.from({ length: steps }, (_, i) => `p${i}`);
  return {
    names,
    edges: names.flatMap((n): Array<[string, string]> => [
      [START, n],
      [n, END],
    ]),
  };
}

servePeer(async (databaseUrl) => {
  const checkpointer = PostgresSaver.fromConnString(databaseUrl);
  await checkpointer.setup();
  const graphs = new Map<string, ReturnType<typeof compile>>();
  const run = async (shape: 'chain' | 'fan', steps: number) => {
    const key = `${shape}:${steps}`;
    let graph = graphs.get(key);
    if (!graph) {
      const { names, edges } = shapeOf(shape, steps);
      graph = compile(names, edges, checkpointer);
      graphs.set(key, graph);
    }
    const out = await graph.invoke(
      { done: 0 },
      // A chain of n nodes takes n super-steps; the default limit is 25.
      { configurable: { thread_id: randomUUID() }, durability: 'sync', recursionLimit: steps + 10 },
    );
    if (out.done !== steps) throw new Error(`${shape} of ${steps} ran ${out.done} steps`);
  };
  return {
    chain: (steps) => run('chain', steps),
    fan: (steps) => run('fan', steps),
    close: () => checkpointer.end(),
  };
});
