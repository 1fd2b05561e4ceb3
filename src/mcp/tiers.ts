/** What the person starting `trade mcp` lets an agent do, from least to most (no imports: completion reads it). */
export const TIERS = ['read', 'paper', 'trade'] as const;
export type Tier = (typeof TIERS)[number];
