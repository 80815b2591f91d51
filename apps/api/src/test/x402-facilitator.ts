import http from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactEvmScheme as ExactEvmClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import {
  type Address,
  decodeFunctionData,
  encodeAbiParameters,
  encodeEventTopics,
  encodeFunctionResult,
  getAddress,
  type Hex,
  keccak256,
  parseAbi,
  toHex,
  verifyTypedData,
} from "viem";
import { generatePrivateKey, privateKeyToAccount } from "viem/accounts";
import { listenOnLoopback } from "./loopback.ts";

/**
 * A loopback x402 facilitator at the HTTP boundary (`/verify`, `/settle`, `/supported`), for the
 * tests of x402 pay-per-call (docs/decisions/052). It is `@x402/core`'s facilitator with
 * `@x402/evm`'s `exact` scheme: the EIP-3009 signatures are checked for real (viem's
 * verifyTypedData on the EIP-712 typed data the scheme builds). There is no chain: the token
 * contract is simulated here (balances, used nonces) and settlement records the transfer instead
 * of sending a transaction. The test can make settlement refuse or hang, or fail the ways a real
 * one does after it moved the money (`SettlementMode`, decision 064), and it serves the chain's
 * JSON-RPC (`/rpc`: `eth_getLogs`, `eth_getTransactionReceipt`) with the token's `Transfer` and
 * `AuthorizationUsed` events, as X402_RPC_URL would.
 */

export const X402_TEST_NETWORK = "eip155:84532";
/** Base Sepolia's USDC: name "USDC", version "2", 6 decimals. */
export const X402_TEST_ASSET = getAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e");
export const X402_TEST_PAY_TO = getAddress("0x1111111111111111111111111111111111111111");

export interface SettledTransfer {
  from: Address;
  to: Address;
  value: bigint;
  nonce: Hex;
  transaction: Hex;
}

/** The token's read functions the facilitator's diagnosis asks for through Multicall3. */
const TOKEN_READS = parseAbi([
  "function balanceOf(address) view returns (uint256)",
  "function name() view returns (string)",
  "function version() view returns (string)",
  "function authorizationState(address, bytes32) view returns (bool)",
]);

/**
 * What /settle does:
 * - `settle`: settles and answers success with the transaction;
 * - `refuse`: answers `insufficient_funds` without moving anything (a definitive refusal);
 * - `hang`: never answers, moves nothing;
 * - `pending`: broadcasts (the transfer waits in the mempool until `mine()`) and answers
 *   `settlement_pending` with the transaction, as `@x402/evm` does when its receipt wait times out;
 *   asked again for the same payload it answers pending until mined, then success (its pending
 *   settlement store);
 * - `error-after-move`: moves the money, then answers 500 in the protocol's shape;
 * - `empty-transaction`: moves the money, answers `success: true` with `transaction: ""`;
 * - `lost`: moves the money, then drops the connection (no answer);
 * - `burn`: the payer uses the authorization's nonce for its own transfer to another address
 *   (`BURN_ADDRESS`) while this settlement's connection drops: nothing reaches the receiving address.
 */
export type SettlementMode =
  | "settle"
  | "refuse"
  | "hang"
  | "pending"
  | "error-after-move"
  | "empty-transaction"
  | "lost"
  | "burn";

export const SETTLEMENT_MODES: readonly SettlementMode[] = [
  "settle",
  "refuse",
  "hang",
  "pending",
  "error-after-move",
  "empty-transaction",
  "lost",
  "burn",
];

/** Where a burnt nonce's transfer goes (the payer's own other address). */
export const BURN_ADDRESS = getAddress("0x2222222222222222222222222222222222222222");

const TOKEN_EVENTS = parseAbi([
  "event Transfer(address indexed from, address indexed to, uint256 value)",
  "event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce)",
]);

interface ChainLog {
  address: Hex;
  topics: Hex[];
  data: Hex;
  transactionHash: Hex;
}

export async function startX402Facilitator() {
  const balances = new Map<string, bigint>();
  const usedNonces = new Set<string>();
  const transfers: SettledTransfer[] = [];
  const requests = { verify: 0, settle: 0, supported: 0 };
  let mode: SettlementMode = "settle";
  /** Per settlement (payer:nonce), the mode it is answered with, over the global one. */
  const modeOf = new Map<string, SettlementMode>();
  /** Per payer, the mode its next settlements are answered with (under a nonce's own). */
  const payerModeOf = new Map<string, SettlementMode>();
  const facilitatorAccount = privateKeyToAccount(generatePrivateKey());
  const key = (from: string, nonce: string) => `${from.toLowerCase()}:${nonce.toLowerCase()}`;
  /** The chain's event logs and mined transactions (the `/rpc` answers). */
  const logs: ChainLog[] = [];
  const mined = new Set<string>();
  /** Broadcast and not mined (mode `pending`): payer:nonce → the transaction and its arguments. */
  const mempool = new Map<string, { transaction: Hex; args: readonly unknown[] }>();
  /** Transactions the facilitator broadcast for an authorization (its pending settlement store). */
  const broadcast = new Map<string, Hex>();
  let sequence = 0;
  /** Settlements held at the door (pauseSettlements) until released. */
  let gate: { arrive(): void; released: Promise<void> } | undefined;

  /** The token's transferWithAuthorization, as the chain would run it (simulated or for real). */
  function transfer(args: readonly unknown[], apply: boolean, known?: Hex): Hex {
    const [from, to, value, , , nonce] = args as [Address, Address, bigint, bigint, bigint, Hex];
    if (usedNonces.has(key(from, nonce))) throw new Error("FiatTokenV2: authorization is used or canceled");
    const balance = balances.get(from.toLowerCase()) ?? 0n;
    if (balance < value) throw new Error("ERC20: transfer amount exceeds balance");
    const transaction = known ?? keccak256(toHex(`${from}:${nonce}:${sequence}`));
    if (apply) {
      sequence += 1;
      usedNonces.add(key(from, nonce));
      balances.set(from.toLowerCase(), balance - value);
      balances.set(to.toLowerCase(), (balances.get(to.toLowerCase()) ?? 0n) + value);
      transfers.push({ from: getAddress(from), to: getAddress(to), value, nonce, transaction });
      mined.add(transaction);
      logs.push(
        {
          address: X402_TEST_ASSET,
          topics: encodeEventTopics({
            abi: TOKEN_EVENTS,
            eventName: "AuthorizationUsed",
            args: { authorizer: from, nonce },
          }) as Hex[],
          data: "0x",
          transactionHash: transaction,
        },
        {
          address: X402_TEST_ASSET,
          topics: encodeEventTopics({
            abi: TOKEN_EVENTS,
            eventName: "Transfer",
            args: { from, to },
          }) as Hex[],
          data: encodeAbiParameters([{ type: "uint256" }], [value]),
          transactionHash: transaction,
        },
      );
    }
    return transaction;
  }

  /** The transferWithAuthorization a payment's payload asks for. */
  function argsOf(paymentPayload: { payload?: { authorization?: Record<string, string> } }) {
    const authorization = paymentPayload.payload?.authorization ?? {};
    return [
      authorization.from,
      authorization.to,
      BigInt(authorization.value ?? 0),
      BigInt(authorization.validAfter ?? 0),
      BigInt(authorization.validBefore ?? 0),
      authorization.nonce,
    ] as readonly unknown[];
  }

  /** The chain's JSON-RPC, the methods X402Rail.lookup and transfersToPayTo use. */
  function rpc(method: string, params: unknown[]): unknown {
    if (method === "eth_getLogs") {
      const [filter] = params as [{ address?: string; topics?: (Hex | null)[] }];
      return logs.filter(
        (log) =>
          (!filter.address || log.address.toLowerCase() === filter.address.toLowerCase()) &&
          (filter.topics ?? []).every(
            (topic, i) => topic === null || log.topics[i]?.toLowerCase() === topic.toLowerCase(),
          ),
      );
    }
    if (method === "eth_getTransactionReceipt") {
      const [hash] = params as [string];
      if (!mined.has(hash)) return null;
      return {
        transactionHash: hash,
        status: "0x1",
        logs: logs.filter((log) => log.transactionHash === hash),
      };
    }
    throw new Error(`the loopback chain has no ${method}`);
  }

  const signer = {
    getAddresses: () => [facilitatorAccount.address] as const,
    async readContract({
      functionName,
      args,
    }: {
      functionName: string;
      args?: readonly unknown[];
    }): Promise<unknown> {
      switch (functionName) {
        case "name":
          return "USDC";
        case "version":
          return "2";
        case "balanceOf":
          return balances.get(String(args?.[0]).toLowerCase()) ?? 0n;
        case "authorizationState":
          return usedNonces.has(key(String(args?.[0]), String(args?.[1])));
        case "transferWithAuthorization":
          transfer(args ?? [], false);
          return undefined;
        case "tryAggregate": {
          // Multicall3: each call is one of the token's reads above, answered as the chain would.
          const [, calls] = args as [boolean, { target: Address; callData: Hex }[]];
          return Promise.all(
            calls.map(async ({ callData }) => {
              try {
                const call = decodeFunctionData({ abi: TOKEN_READS, data: callData });
                const result = await signer.readContract({
                  functionName: call.functionName,
                  args: call.args,
                });
                return {
                  success: true,
                  returnData: encodeFunctionResult({
                    abi: TOKEN_READS,
                    functionName: call.functionName,
                    result: result as never,
                  }),
                };
              } catch {
                return { success: false, returnData: "0x" as Hex };
              }
            }),
          );
        }
        default:
          throw new Error(`the loopback token has no ${functionName}`);
      }
    },
    verifyTypedData: (args: Parameters<typeof verifyTypedData>[0]) => verifyTypedData(args),
    async writeContract({ functionName, args }: { functionName: string; args: readonly unknown[] }) {
      if (functionName !== "transferWithAuthorization") throw new Error(`unexpected ${functionName}`);
      return transfer(args, true);
    },
    async sendTransaction(): Promise<Hex> {
      throw new Error("the loopback chain sends no transactions");
    },
    async waitForTransactionReceipt() {
      return { status: "success" };
    },
    // The asset is a contract; every payer is a plain account (ECDSA signatures).
    async getCode({ address }: { address: Address }) {
      return getAddress(address) === X402_TEST_ASSET ? ("0x6080" as Hex) : undefined;
    },
  };
  const facilitator = new x402Facilitator().register(
    X402_TEST_NETWORK,
    new ExactEvmScheme(signer as unknown as ConstructorParameters<typeof ExactEvmScheme>[0]),
  );

  const server = http.createServer((req, res) => {
    let raw = "";
    req.on("data", (chunk) => {
      raw += chunk;
    });
    req.on("end", async () => {
      const send = (status: number, body: unknown) => {
        res.writeHead(status, { "content-type": "application/json" });
        res.end(JSON.stringify(body, (_, value) => (typeof value === "bigint" ? value.toString() : value)));
      };
      try {
        if (req.method === "POST" && req.url === "/rpc") {
          const call = JSON.parse(raw || "{}") as { id?: unknown; method: string; params?: unknown[] };
          try {
            return send(200, { jsonrpc: "2.0", id: call.id, result: rpc(call.method, call.params ?? []) });
          } catch (error) {
            return send(200, {
              jsonrpc: "2.0",
              id: call.id,
              error: { code: -32601, message: (error as Error).message },
            });
          }
        }
        if (req.method === "GET" && req.url === "/supported") {
          requests.supported += 1;
          return send(200, facilitator.getSupported());
        }
        const body = JSON.parse(raw || "{}");
        if (req.method === "POST" && req.url === "/verify") {
          requests.verify += 1;
          return send(200, await facilitator.verify(body.paymentPayload, body.paymentRequirements));
        }
        if (req.method === "POST" && req.url === "/settle") {
          requests.settle += 1;
          if (gate) {
            gate.arrive();
            await gate.released;
          }
          const args = argsOf(body.paymentPayload);
          const id = key(String(args[0]), String(args[5]));
          const payer = getAddress(String(args[0]));
          // Its pending settlement store: the same payload again is reconciled with what was broadcast.
          const known = broadcast.get(id);
          if (known) {
            if (!mined.has(known))
              return send(200, {
                success: false,
                errorReason: "settlement_pending",
                errorMessage: "waiting for the receipt",
                transaction: known,
                network: X402_TEST_NETWORK,
                payer,
              });
            return send(200, { success: true, transaction: known, network: X402_TEST_NETWORK, payer });
          }
          const current = modeOf.get(id) ?? payerModeOf.get(String(args[0]).toLowerCase()) ?? mode;
          // Fixed for this authorization from now on: asked again, it is answered the same way.
          modeOf.set(id, current);
          if (current === "hang") return;
          if (current === "refuse")
            return send(200, {
              success: false,
              errorReason: "insufficient_funds",
              errorMessage: "the payer moved the funds away",
              transaction: "",
              network: X402_TEST_NETWORK,
            });
          if (current === "settle")
            return send(200, await facilitator.settle(body.paymentPayload, body.paymentRequirements));
          const checked = await facilitator.verify(body.paymentPayload, body.paymentRequirements);
          if (!checked.isValid)
            return send(200, {
              success: false,
              errorReason: checked.invalidReason,
              errorMessage: checked.invalidMessage,
              transaction: "",
              network: X402_TEST_NETWORK,
              payer,
            });
          if (current === "burn") {
            // The payer's own transferWithAuthorization with this nonce, to its other address.
            transfer([args[0], BURN_ADDRESS, args[2], args[3], args[4], args[5]], true);
            req.socket.destroy();
            return;
          }
          if (current === "pending") {
            const transaction = transfer(args, false);
            const hash = keccak256(toHex(`pending:${transaction}`));
            mempool.set(id, { transaction: hash, args });
            broadcast.set(id, hash);
            return send(200, {
              success: false,
              errorReason: "settlement_pending",
              errorMessage: "timed out waiting for the receipt",
              transaction: hash,
              network: X402_TEST_NETWORK,
              payer,
            });
          }
          const transaction = transfer(args, true);
          if (current === "lost") {
            req.socket.destroy();
            return;
          }
          if (current === "error-after-move")
            return send(500, {
              success: false,
              errorReason: "unexpected_settle_error",
              errorMessage: "the node went away",
              transaction: "",
              network: X402_TEST_NETWORK,
            });
          return send(200, {
            success: true,
            transaction: current === "empty-transaction" ? "" : transaction,
            network: X402_TEST_NETWORK,
            payer,
          });
        }
        send(404, { error: "not found" });
      } catch (error) {
        send(500, { error: (error as Error).message });
      }
    });
  });
  const listening = await listenOnLoopback(server);
  return {
    url: `http://127.0.0.1:${listening.port}`,
    transfers,
    requests,
    /** Gives an address funds (atomic units: micro-dollars). */
    mint(address: Address, micros: bigint) {
      balances.set(address.toLowerCase(), (balances.get(address.toLowerCase()) ?? 0n) + micros);
    },
    balanceOf: (address: Address) => balances.get(address.toLowerCase()) ?? 0n,
    /** What /settle does from now on (SettlementMode). */
    setSettlement(next: SettlementMode) {
      mode = next;
    },
    /** What /settle does for one payer's authorization (its nonce), over setSettlement's. */
    settleAs(payer: string, nonce: string, next: SettlementMode) {
      modeOf.set(key(payer, nonce), next);
    },
    /**
     * Holds every settlement at the door until `release()`: `arrived` resolves when the first one
     * is there (a test can act while a call is settling).
     */
    pauseSettlements() {
      let arrive = () => {};
      let release = () => {};
      const arrived = new Promise<void>((resolve) => {
        arrive = resolve;
      });
      const released = new Promise<void>((resolve) => {
        release = resolve;
      });
      gate = { arrive, released };
      return {
        arrived,
        release() {
          gate = undefined;
          release();
        },
      };
    },
    /** What /settle does for a payer's next authorizations (their nonces unknown yet). */
    settlePayerAs(payer: string, next: SettlementMode) {
      payerModeOf.set(payer.toLowerCase(), next);
    },
    /**
     * Submits a payment's authorization to the token directly, as anyone holding it may (a
     * facilitator's late broadcast, or a relayer): the transfer happens without any /settle.
     */
    relay(paymentPayload: { payload?: unknown }) {
      return transfer(argsOf(paymentPayload as Parameters<typeof argsOf>[0]), true);
    },
    /** Mines every broadcast transfer (mode `pending`); returns how many. */
    mine() {
      let count = 0;
      for (const [id, { transaction, args }] of mempool) {
        mempool.delete(id);
        try {
          transfer(args, true, transaction);
          count += 1;
        } catch {
          // The payer spent the funds or the nonce meanwhile: the transaction reverts, nothing
          // moves, and the facilitator forgets it (asked again, it settles anew or refuses).
          broadcast.delete(id);
        }
      }
      return count;
    },
    /** Broadcast and not mined yet (mode `pending`). */
    pendingCount: () => mempool.size,
    /** What the chain moved to an address (its ledger): the sum of the transfers to it. */
    receivedBy(address: Address) {
      return transfers
        .filter((transfer) => transfer.to.toLowerCase() === address.toLowerCase())
        .reduce((sum, transfer) => sum + transfer.value, 0n);
    },
    /** The env that turns x402 on for a test server, paying to X402_TEST_PAY_TO. */
    env(): Record<string, string> {
      return {
        X402_PAY_TO: X402_TEST_PAY_TO,
        X402_FACILITATOR_URL: `http://127.0.0.1:${listening.port}`,
        X402_NETWORK: X402_TEST_NETWORK,
        X402_ASSET: X402_TEST_ASSET,
        X402_RPC_URL: `http://127.0.0.1:${listening.port}/rpc`,
      };
    },
    stop: () => listening.close(),
  };
}

export type X402Facilitator = Awaited<ReturnType<typeof startX402Facilitator>>;

/**
 * An agent's wallet: a viem local account (`privateKeyToAccount`) and `@x402/fetch`'s fetch that
 * pays the 402s it meets with it (the `exact` scheme, EIP-3009 signatures).
 */
export function x402Wallet(privateKey: Hex = generatePrivateKey()) {
  const account = privateKeyToAccount(privateKey);
  const client = new x402Client().register("eip155:*", new ExactEvmClientScheme(account));
  const wallet = {
    account,
    address: account.address,
    client,
    /** The last PAYMENT-SIGNATURE this wallet sent, with its request (for replays). */
    lastPayment: undefined as { url: string; signature: string; body: string } | undefined,
    fetch: wrapFetchWithPayment(async (input, init) => {
      const request = new Request(input, init);
      const signature = request.headers.get("payment-signature");
      if (signature) wallet.lastPayment = { url: request.url, signature, body: await request.clone().text() };
      return fetch(request);
    }, client),
  };
  return wallet;
}
