// What a proxy counts about its connections (accepted, refused by intention, bytes, errors); logged
// each minute it had traffic and at shutdown. The proxy is its own process, so these are not in the
// agent's prom-client registry.
export class ConnectionStats {
  accepted = 0;
  refused = 0;
  errors = 0;
  bytesIn = 0;
  bytesOut = 0;
  outbound = 0;

  snapshot(): Record<string, number> {
    return { accepted: this.accepted, refused: this.refused, errors: this.errors, outbound: this.outbound, bytesIn: this.bytesIn, bytesOut: this.bytesOut };
  }
}
