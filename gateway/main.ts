// Distributed entry of the gateway: one process, services reached at *_ADDR, edge state in Redis.
import { bindGatewayEdge, runGateway } from './runtime';

void runGateway(bindGatewayEdge);
