import { agentCall, agentRefund, agentReplay, keyCall } from "./agent-calls.ts";
import type { Attack } from "./attack.ts";
import { disputeTopUp, payOut, refundTopUp } from "./chargebacks.ts";
import { creatorTopUp, evalRun, testPrompt } from "./creator-calls.ts";
import { experimentStep, moveProduction } from "./experiments.ts";
import {
  cancel,
  changePrice,
  editPlan,
  killAServer,
  removeApp,
  renew,
  revokeKey,
  setKeyLimit,
  subscribe,
  topUp,
} from "./management.ts";
import { onlineEvalStep } from "./online-evals.ts";
import { organizationBudget, organizationCall, organizationRole } from "./organizations.ts";
import { cutPriceUnderAnArm, oversizedCall } from "./oversized.ts";
import {
  burst,
  limitedKeyCall,
  mcpBatch,
  mcpCall,
  oneCall,
  replay,
  responsesCall,
  stopStream,
  workflowRun,
} from "./paid-calls.ts";
import type { Prng } from "./prng.ts";
import { rolloutStep } from "./rollouts.ts";
import { promotionStep, trialStep } from "./sponsored.ts";
import { suspendConsumer } from "./suspensions.ts";

export interface Action {
  name: string;
  weight: number;
  run(attack: Attack, prng: Prng, actor: number): Promise<void>;
}

/** The random interleaving: each actor picks its next action from this table. */
export const actions: Action[] = [
  { name: "blocking call", weight: 30, run: (a, p, actor) => oneCall(a, p, actor, "blocking call", false) },
  { name: "streaming call", weight: 20, run: (a, p, actor) => oneCall(a, p, actor, "streaming call", true) },
  { name: "burst", weight: 6, run: burst },
  { name: "idempotent replay", weight: 4, run: replay },
  { name: "responses call", weight: 8, run: responsesCall },
  { name: "mcp tool call", weight: 8, run: mcpCall },
  { name: "mcp batch", weight: 3, run: mcpBatch },
  { name: "workflow run", weight: 8, run: workflowRun },
  { name: "stopped stream", weight: 6, run: stopStream },
  { name: "limited-key call", weight: 10, run: limitedKeyCall },
  { name: "set key limit", weight: 2, run: setKeyLimit },
  { name: "top-up", weight: 5, run: topUp },
  { name: "subscribe", weight: 5, run: subscribe },
  { name: "cancel plan", weight: 2, run: cancel },
  { name: "renew plan", weight: 4, run: renew },
  { name: "change price", weight: 4, run: changePrice },
  { name: "edit plan", weight: 3, run: editPlan },
  { name: "revoke key", weight: 2, run: revokeKey },
  { name: "remove app", weight: 0.5, run: removeApp },
  { name: "kill a server", weight: 1.5, run: killAServer },
  { name: "suspend a consumer", weight: 1.5, run: suspendConsumer },
  // Decision 045: refunds and disputes of top-ups after payouts.
  { name: "refund top-up", weight: 1.5, run: refundTopUp },
  { name: "dispute top-up", weight: 1.5, run: disputeTopUp },
  { name: "creator payout", weight: 1.5, run: payOut },
  // Issues 30 and 40: agents without an account paying with x402 or MPP into their balance, calling
  // with its key, replaying spent credentials, and asking their balance back.
  // (Together the weight x402's calls and replays had: the rest of the attack keeps its share.)
  { name: "agent call", weight: 7, run: agentCall },
  { name: "agent balance-key call", weight: 3, run: keyCall },
  { name: "agent replay", weight: 1.5, run: agentReplay },
  { name: "agent refund", weight: 2.5, run: agentRefund },
  // Issue 31: experiments started and ended, production moved, while calls race (decision 058).
  { name: "experiment", weight: 4, run: experimentStep },
  { name: "move production", weight: 3, run: moveProduction },
  // Issue 41: guarded rollouts started, stepped (forced ticks) and stopped while calls race (decision 077).
  { name: "rollout", weight: 4, run: rolloutStep },
  // Issue 37: inputs beyond what a call pays, and price cuts under a dear experiment arm (decision 063).
  { name: "oversized call", weight: 5, run: oversizedCall },
  { name: "cut price under an arm", weight: 1.5, run: cutPriceUnderAnArm },
  // Issue 37: the creator's calls no price pays for, from a wallet that starts empty (decision 062).
  { name: "test prompt", weight: 3, run: testPrompt },
  { name: "eval run", weight: 1.5, run: evalRun },
  { name: "creator top-up", weight: 1, run: creatorTopUp },
  // Issue 41: online evals turned on and off with small caps, a rubric judged, while calls race (decision 076).
  { name: "online evals", weight: 2, run: onlineEvalStep },
  // Issue 42: free trials started by one person on both processes at once, promotion codes redeemed
  // past their limit at once; the consumers' calls then meet their grants (decision 080).
  { name: "free trial", weight: 2, run: trialStep },
  { name: "promotion code", weight: 2, run: promotionStep },
  // Issue 43: an organization's members call with their keys and the header while their budgets
  // and roles change (decision 084).
  { name: "organization call", weight: 10, run: organizationCall },
  { name: "member budget", weight: 1.5, run: organizationBudget },
  { name: "member role", weight: 1, run: organizationRole },
];
