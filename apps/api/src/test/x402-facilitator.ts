import http from "node:http";
import { x402Facilitator } from "@x402/core/facilitator";
import { ExactEvmScheme as ExactEvmClientScheme } from "@x402/evm/exact/client";
import { ExactEvmScheme } from "@x402/evm/exact/facilitator";
import { wrapFetchWithPayment, x402Client } from "@x402/fetch";
import {
  type Address,
  decodeFunctionData,
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
 * of sending a transaction. The test can make settlement refuse or hang.
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

export type SettlementMode = "settle" | "refuse" | "hang";

export async function startX402Facilitator() {
  const balances = new Map<string, bigint>();
  const usedNonces = new Set<string>();
  const transfers: SettledTransfer[] = [];
  const requests = { verify: 0, settle: 0, supported: 0 };
  let mode: SettlementMode = "settle";
  const facilitatorAccount = privateKeyToAccount(generatePrivateKey());
  const key = (from: string, nonce: string) => `${from.toLowerCase()}:${nonce.toLowerCase()}`;

  /** The token's transferWithAuthorization, as the chain would run it (simulated or for real). */
  function transfer(args: readonly unknown[], apply: boolean): Hex {
    const [from, to, value, , , nonce] = args as [Address, Address, bigint, bigint, bigint, Hex];
    if (usedNonces.has(key(from, nonce))) throw new Error("FiatTokenV2: authorization is used or canceled");
    const balance = balances.get(from.toLowerCase()) ?? 0n;
    if (balance < value) throw new Error("ERC20: transfer amount exceeds balance");
    const transaction = keccak256(toHex(`${from}:${nonce}:${transfers.length}`));
    if (apply) {
      usedNonces.add(key(from, nonce));
      balances.set(from.toLowerCase(), balance - value);
      balances.set(to.toLowerCase(), (balances.get(to.toLowerCase()) ?? 0n) + value);
      transfers.push({ from: getAddress(from), to: getAddress(to), value, nonce, transaction });
    }
    return transaction;
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
          if (mode === "hang") return;
          if (mode === "refuse")
            return send(200, {
              success: false,
              errorReason: "insufficient_funds",
              errorMessage: "the payer moved the funds away",
              transaction: "",
              network: X402_TEST_NETWORK,
            });
          return send(200, await facilitator.settle(body.paymentPayload, body.paymentRequirements));
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
    /** What /settle does from now on: settle, answer that it refused, or never answer. */
    setSettlement(next: SettlementMode) {
      mode = next;
    },
    /** The env that turns x402 on for a test server, paying to X402_TEST_PAY_TO. */
    env(): Record<string, string> {
      return {
        X402_PAY_TO: X402_TEST_PAY_TO,
        X402_FACILITATOR_URL: `http://127.0.0.1:${listening.port}`,
        X402_NETWORK: X402_TEST_NETWORK,
        X402_ASSET: X402_TEST_ASSET,
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
