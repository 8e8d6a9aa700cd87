/** The part of mailauth's DKIM verifier the tests use (the package ships no types for its lib paths). */
declare module 'mailauth/lib/dkim/verify' {
  export interface DkimResult {
    signingDomain: string;
    selector: string;
    status: {
      result: 'pass' | 'fail' | 'neutral' | 'none' | 'policy' | 'temperror' | 'permerror';
      comment?: string;
    };
  }
  export function dkimVerify(
    message: Buffer,
    options: { resolver: (name: string, type: string) => Promise<unknown> },
  ): Promise<{ results: DkimResult[] }>;
}
