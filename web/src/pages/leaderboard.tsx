import { useQuery } from 'urql';
import { graphql } from '../gql/index.js';
import { useI18n } from '../i18n.js';
import { Card, Empty, Loading, Money, Page } from '../ui.js';

const LeaderboardDocument = graphql(`
  query Leaderboard {
    leaderboard(limit: 20) {
      date
      timezone
      prize
      totalTokens
      totalSavedUsd
      me {
        rank
        tokens
      }
      items {
        rank
        user
        tokens
        savedUsd
        isMe
      }
    }
  }
`);

export function Leaderboard() {
  const { t, formatNumber, count } = useI18n();
  const [{ data }] = useQuery({ query: LeaderboardDocument, requestPolicy: 'network-only' });
  const board = data?.leaderboard;
  if (!board) return <Page title={t('nav.leaderboard')}><Loading /></Page>;
  return (
    <Page title={t('nav.leaderboard')}>
      <Card>
        <p>{t('board.day', { date: board.date, zone: board.timezone })}</p>
        {board.prize && <p>{t('board.prize', { prize: board.prize })}</p>}
        <p>
          {t('board.totals', { tokens: count('token', board.totalTokens) })} <Money usd={board.totalSavedUsd} />
        </p>
        {board.me && <p>{t('board.me', { rank: board.me.rank, tokens: count('token', board.me.tokens) })}</p>}
      </Card>
      {!board.items.length ? (
        <Empty>{t('board.none')}</Empty>
      ) : (
        <div className="table-wrap">
          <table className="table">
            <thead>
              <tr>
                <th scope="col">#</th>
                <th scope="col">{t('board.user')}</th>
                <th scope="col">{t('usage.tokens')}</th>
                <th scope="col">{t('dash.savings')}</th>
              </tr>
            </thead>
            <tbody>
              {board.items.map((entry) => (
                <tr key={entry.rank} className={entry.isMe ? 'me' : undefined} aria-current={entry.isMe ? 'true' : undefined}>
                  <td>{entry.rank}</td>
                  <td>{entry.user}</td>
                  <td>{formatNumber(entry.tokens)}</td>
                  <td>
                    <Money usd={entry.savedUsd} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </Page>
  );
}
