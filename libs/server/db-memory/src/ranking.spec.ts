import { keywords, memoryScore, rankMemories, recencyWeight } from './ranking';

const NOW = new Date('2026-12-03T12:00:00.000Z');
const daysAgo = (d: number) => new Date(NOW.getTime() - d * 24 * 60 * 60 * 1000);
const fact = (text: string, ageDays: number) => ({
  text,
  keywords: keywords(text),
  createdAt: daysAgo(ageDays),
});

describe('keywords', () => {
  it('lower-cases words and drops stop words and single letters', () => {
    expect(keywords('I prefer the METRIC units, always!')).toEqual(['prefer', 'metric', 'units']);
    expect(keywords('a b c')).toEqual([]);
  });

  it('keeps numbers, even a single digit', () => {
    expect(keywords('Room 7 on floor 12')).toEqual(['room', '7', 'floor', '12']);
  });

  it('splits Chinese into character bigrams and keeps a lone character', () => {
    expect(keywords('我喜欢咖啡')).toEqual(['我喜', '喜欢', '欢咖', '咖啡']);
    expect(keywords('茶')).toEqual(['茶']);
    // Mixed text: words and bigrams side by side.
    expect(keywords('用 Python 写脚本')).toEqual(['用', 'python', '写脚', '脚本']);
  });

  it('normalises full-width forms (NFKC) so they match their ASCII spelling', () => {
    expect(keywords('ＰＹＴＨＯＮ')).toEqual(['python']);
  });

  it('lists each token once', () => {
    expect(keywords('tea tea TEA')).toEqual(['tea']);
  });
});

describe('recency weight', () => {
  it('halves every seven days', () => {
    expect(recencyWeight(NOW, NOW)).toBe(1);
    expect(recencyWeight(daysAgo(7), NOW)).toBeCloseTo(0.5, 12);
    expect(recencyWeight(daysAgo(14), NOW)).toBeCloseTo(0.25, 12);
    expect(recencyWeight(daysAgo(3.5), NOW)).toBeCloseTo(Math.SQRT1_2, 12);
  });

  it('treats a fact stamped in the future as new', () => {
    expect(recencyWeight(daysAgo(-1), NOW)).toBe(1);
  });
});

describe('memory score and ranking', () => {
  it('is overlap × 0.5^(ageDays/7)', () => {
    const q = keywords('deploy the staging server');
    expect(memoryScore(q, fact('staging server is at 10.0.0.5', 0), NOW)).toBe(2);
    expect(memoryScore(q, fact('staging server is at 10.0.0.5', 7), NOW)).toBeCloseTo(1, 12);
    expect(memoryScore(q, fact('I like green tea', 0), NOW)).toBe(0);
  });

  it('ranks a fresh fact over an older one with more overlap, as the half-life says', () => {
    // Old: overlap 2, 8 days → 2 × 0.5^(8/7) ≈ 0.906 < fresh: overlap 1 → 1.
    const fresh = fact('the deploy target is staging', 0);
    const older = fact('deploy to staging with the blue server', 8);
    const ranked = rankMemories('deploy server', [older, fresh], NOW, 5);
    expect(ranked.map((r) => r.text)).toEqual([fresh.text, older.text]);
    expect(ranked[0]?.score).toBe(1);
    expect(ranked[1]?.score).toBeCloseTo(2 * Math.pow(0.5, 8 / 7), 12);
  });

  it('lets an old fact with enough more overlap win', () => {
    // Old: overlap 3, 7 days → 1.5 > fresh: overlap 1 → 1.
    const fresh = fact('the deploy target is staging', 0);
    const older = fact('deploy the blue server over ssh', 7);
    const ranked = rankMemories('deploy server ssh', [fresh, older], NOW, 5);
    expect(ranked.map((r) => r.text)).toEqual([older.text, fresh.text]);
    expect(ranked[0]?.score).toBeCloseTo(1.5, 12);
  });

  it('breaks a tie in favour of the newer fact', () => {
    // Two half-lives exactly: overlap 4 × ¼ = 1 = overlap 1 now.
    const older = fact('alpha beta gamma delta', 14);
    const fresh = fact('alpha', 0);
    const ranked = rankMemories('alpha beta gamma delta', [older, fresh], NOW, 5);
    expect(ranked[0]?.score).toBeCloseTo(ranked[1]?.score ?? NaN, 12);
    expect(ranked.map((r) => r.text)).toEqual(['alpha', older.text]);
  });

  it('drops facts without overlap, honours the limit and matches Chinese', () => {
    const facts = [
      fact('我喜欢喝咖啡，不加糖', 1),
      fact('我的猫叫小白', 0),
      fact('coffee without sugar', 0),
      fact('咖啡店在二楼', 3),
    ];
    const ranked = rankMemories('给我推荐咖啡', facts, NOW, 1);
    expect(ranked).toHaveLength(1);
    expect(ranked[0]?.text).toBe('我喜欢喝咖啡，不加糖');
    expect(rankMemories('给我推荐咖啡', facts, NOW, 5).map((r) => r.text)).toEqual([
      '我喜欢喝咖啡，不加糖',
      '咖啡店在二楼',
    ]);
  });

  it('finds nothing for a query of stop words only', () => {
    expect(rankMemories('what is the', [fact('what is the answer', 0)], NOW, 5)).toEqual([]);
  });
});
