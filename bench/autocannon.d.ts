// The slice of autocannon's API the bench uses (the package ships no types; @types/autocannon lags its versions).
declare module 'autocannon' {
  namespace autocannon {
    interface Request {
      method?: string;
      path?: string;
      headers?: Record<string, string>;
      body?: string;
      setupRequest?: (request: Request, context: Record<string, unknown>) => Request | null;
    }
    interface Options {
      url: string | string[];
      connections?: number;
      duration?: number;
      overallRate?: number;
      connectionRate?: number;
      ignoreCoordinatedOmission?: boolean;
      timeout?: number;
      requests?: Request[];
      setupClient?: (client: unknown) => void;
    }
    interface Result {
      statusCodeStats: Record<string, { count: number }>;
      requests: { total: number; average: number };
      errors: number;
      timeouts: number;
      duration: number;
    }
  }
  function autocannon(options: autocannon.Options): Promise<autocannon.Result>;
  export default autocannon;
}
