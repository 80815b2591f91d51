import { fuzzRoutes, fuzzShards } from "./fuzz-routes.ts";

fuzzRoutes(fuzzShards.catalogue);
