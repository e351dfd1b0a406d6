// The SQL tools arrive in the next commit.
export const SQL_TOOLS = [] as const;
