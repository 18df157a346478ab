// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";
import {ReentrancyGuard} from "../src/ReentrancyGuard.sol";
import {MockERC20, FeeOnTransferToken, FalseToken} from "./mocks/Tokens.sol";
import {ReentrantReceiver, RejectingReceiver} from "./mocks/Receivers.sol";

contract StakeRegistryTest is Test {
    event Bound(bytes32 indexed agentId, address indexed controller, bytes proof);
    event Staked(bytes32 indexed agentId, address indexed controller, uint256 amount, uint256 staked);
    event UnbondRequested(bytes32 indexed agentId, address indexed controller, uint256 amount, uint64 unlockAt);
    event Withdrawn(bytes32 indexed agentId, address indexed controller, uint256 amount);
    event Slashed(
        bytes32 indexed agentId, address indexed controller, uint256 amount, address beneficiary, bytes32 reason
    );
    event Rotated(bytes32 indexed agentId, address indexed controller, bytes32 indexed newAgentId, bytes proof);
    event Revoked(bytes32 indexed agentId, address indexed controller);
    event Locked(bytes32 indexed agentId, address indexed controller, uint256 indexed lockId, uint256 amount);
    event Unlocked(bytes32 indexed agentId, address indexed controller, uint256 indexed lockId, uint256 amount);

    uint64 internal constant DELAY = 7 days;
    StakeRegistry internal registry;
    address internal controller = makeAddr("controller");
    address internal locker = makeAddr("locker");
    address internal jobLocker = makeAddr("jobLocker");
    address internal victim = makeAddr("victim");
    address internal stranger = makeAddr("stranger");
    bytes32 internal constant AGENT = keccak256("did:key:z6MkAgent");
    bytes32 internal constant NEXT = keccak256("did:key:z6MkAgentRotated");

    function setUp() public {
        vm.warp(1_700_000_000);
        vm.prank(locker); // the escrow creates its registry and is its locker
        registry = new StakeRegistry(address(0), DELAY, 0.1 ether, jobLocker);
        vm.deal(controller, 100 ether);
        vm.deal(stranger, 100 ether);
    }

    function _bindAndStake(uint256 amount) internal {
        vm.startPrank(controller);
        registry.bind(AGENT, "jws");
        registry.stake{value: amount}(AGENT, amount);
        vm.stopPrank();
    }

    function _status(bytes32 id, address c) internal view returns (uint256) {
        return uint256(registry.recordOf(id, c).status);
    }

    function _wrongStatus(bytes32 id, address c, IStakeRegistry.Status s) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IStakeRegistry.WrongStatus.selector, id, c, s);
    }

    // --- constructor and administration ---

    function test_constructor_setsConfig() public view {
        vm.assertEq(registry.stakeToken(), address(0), "ETH");
        vm.assertEq(uint256(registry.unbondDelay()), DELAY, "delay");
        vm.assertEq(registry.locker(), locker, "locker");
    }

    // --- bind ---

    function test_bind_recordsControllerAndEmitsProof() public {
        vm.expectEmit(true, true, false, true, address(registry));
        emit Bound(AGENT, controller, "jws-proof");
        vm.prank(controller);
        registry.bind(AGENT, "jws-proof");
        vm.assertEq(_status(AGENT, controller), uint256(IStakeRegistry.Status.Bound), "bound");
    }

    function test_bind_revertsTwice() public {
        vm.prank(controller);
        registry.bind(AGENT, "");
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Bound));
        vm.prank(controller);
        registry.bind(AGENT, "");
    }

    function test_bind_bySquatterDoesNotTouchTheRealController() public {
        vm.prank(stranger);
        registry.bind(AGENT, "forged");
        _bindAndStake(1 ether);
        vm.assertEq(registry.stakeOf(AGENT, controller), 1 ether, "real controller's stake");
        vm.assertEq(registry.stakeOf(AGENT, stranger), 0, "squatter has none");
    }

    // --- stake ---

    function test_stake_addsUp() public {
        _bindAndStake(1 ether);
        vm.expectEmit(true, true, false, true, address(registry));
        emit Staked(AGENT, controller, 2 ether, 3 ether);
        vm.prank(controller);
        registry.stake{value: 2 ether}(AGENT, 2 ether);
        vm.assertEq(registry.stakeOf(AGENT, controller), 3 ether, "stake");
        vm.assertEq(address(registry).balance, 3 ether, "held");
    }

    function test_stake_reverts() public {
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.None));
        vm.prank(controller);
        registry.stake{value: 1}(AGENT, 1);
        vm.prank(controller);
        registry.bind(AGENT, "");
        vm.startPrank(controller);
        vm.expectRevert(IStakeRegistry.InvalidAmount.selector);
        registry.stake(AGENT, 0);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InvalidValue.selector, uint256(1), uint256(2)));
        registry.stake{value: 1}(AGENT, 2);
        vm.stopPrank();
    }

    function test_stake_inERC20CountsWhatArrives() public {
        FeeOnTransferToken fot = new FeeOnTransferToken(100);
        StakeRegistry tokenRegistry = new StakeRegistry(address(fot), DELAY, 0.1 ether, jobLocker);
        fot.mint(controller, 100 ether);
        vm.startPrank(controller);
        fot.approve(address(tokenRegistry), type(uint256).max);
        tokenRegistry.bind(AGENT, "");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InvalidValue.selector, uint256(1), uint256(0)));
        tokenRegistry.stake{value: 1}(AGENT, 10 ether);
        tokenRegistry.stake(AGENT, 10 ether);
        vm.stopPrank();
        vm.assertEq(tokenRegistry.stakeOf(AGENT, controller), 9.9 ether, "1% burned in transit");
        vm.assertEq(fot.balanceOf(address(tokenRegistry)), 9.9 ether, "held");
    }

    function test_stake_falseTokenFails() public {
        FalseToken ft = new FalseToken();
        StakeRegistry tokenRegistry = new StakeRegistry(address(ft), DELAY, 0.1 ether, jobLocker);
        ft.mint(controller, 1 ether);
        vm.startPrank(controller);
        ft.approve(address(tokenRegistry), 1 ether);
        tokenRegistry.bind(AGENT, "");
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeRegistry.TransferFailed.selector, address(ft), address(tokenRegistry), uint256(1 ether)
            )
        );
        tokenRegistry.stake(AGENT, 1 ether);
        vm.stopPrank();
    }

    // --- unbond and withdraw ---

    function test_requestUnbond_thenWithdrawAfterDelay() public {
        _bindAndStake(5 ether);
        uint64 unlockAt = uint64(block.timestamp) + DELAY;
        vm.expectEmit(true, true, false, true, address(registry));
        emit UnbondRequested(AGENT, controller, 2 ether, unlockAt);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 2 ether);
        vm.assertEq(registry.stakeOf(AGENT, controller), 3 ether, "unbonding stops counting");

        vm.warp(unlockAt - 1);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.StillBonded.selector, unlockAt));
        vm.prank(controller);
        registry.withdraw(AGENT);

        vm.warp(unlockAt);
        uint256 before = controller.balance;
        vm.expectEmit(true, true, false, true, address(registry));
        emit Withdrawn(AGENT, controller, 2 ether);
        vm.prank(controller);
        registry.withdraw(AGENT);
        vm.assertEq(controller.balance - before, 2 ether, "paid");
        vm.expectRevert(IStakeRegistry.NothingToWithdraw.selector);
        vm.prank(controller);
        registry.withdraw(AGENT);
    }

    function test_requestUnbond_reverts() public {
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.None));
        vm.prank(controller);
        registry.requestUnbond(AGENT, 1);
        _bindAndStake(1 ether);
        vm.startPrank(controller);
        vm.expectRevert(IStakeRegistry.InvalidAmount.selector);
        registry.requestUnbond(AGENT, 0);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(1 ether), uint256(2 ether))
        );
        registry.requestUnbond(AGENT, 2 ether);
        vm.stopPrank();
    }

    function test_requestUnbond_restartsTheDelay() public {
        _bindAndStake(2 ether);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 1 ether);
        vm.warp(block.timestamp + DELAY - 1);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 1 ether);
        vm.warp(block.timestamp + 1);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.StillBonded.selector, uint64(block.timestamp - 1 + DELAY))
        );
        vm.prank(controller);
        registry.withdraw(AGENT);
    }

    function test_withdraw_revertsWhenControllerRefusesAndKeepsStake() public {
        RejectingReceiver wallet = new RejectingReceiver();
        wallet.exec(address(registry), 0, abi.encodeCall(registry.bind, (AGENT, "")));
        wallet.exec{value: 1 ether}(address(registry), 1 ether, abi.encodeCall(registry.stake, (AGENT, 1 ether)));
        wallet.exec(address(registry), 0, abi.encodeCall(registry.requestUnbond, (AGENT, 1 ether)));
        vm.warp(block.timestamp + DELAY);
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeRegistry.TransferFailed.selector, address(0), address(wallet), uint256(1 ether)
            )
        );
        wallet.exec(address(registry), 0, abi.encodeCall(registry.withdraw, (AGENT)));
        vm.assertEq(uint256(registry.recordOf(AGENT, address(wallet)).unbonding), 1 ether, "still there");
    }

    // --- lock, unlock, slash ---

    function _lock(uint256 lockId, uint256 amount) internal {
        vm.prank(locker);
        registry.lock(lockId, AGENT, controller, amount);
    }

    function test_lock_holdsStakeAgainstUnbondAndRotation() public {
        _bindAndStake(3 ether);
        vm.expectEmit(true, true, true, true, address(registry));
        emit Locked(AGENT, controller, 7, 2 ether);
        _lock(7, 2 ether);
        vm.assertEq(registry.stakeOf(AGENT, controller), 3 ether, "locked stake still counts");
        vm.assertEq(registry.freeStakeOf(AGENT, controller), 1 ether, "free");
        vm.assertEq(registry.lockedAgent(7), AGENT, "lock recorded");
        vm.startPrank(controller);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(1 ether), uint256(2 ether))
        );
        registry.requestUnbond(AGENT, 2 ether);
        registry.requestUnbond(AGENT, 1 ether);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.StakeLocked.selector, AGENT, controller, uint256(2 ether))
        );
        registry.rotate(AGENT, NEXT, "");
        vm.stopPrank();
        vm.expectEmit(true, true, true, true, address(registry));
        emit Unlocked(AGENT, controller, 7, 2 ether);
        vm.prank(locker);
        registry.unlock(7, controller, 2 ether, 0, address(0));
        vm.assertEq(registry.freeStakeOf(AGENT, controller), 2 ether, "free again");
        vm.assertEq(registry.lockedAgent(7), bytes32(0), "lock gone");
        vm.prank(controller);
        registry.rotate(AGENT, NEXT, ""); // nothing locked: rotation works again
    }

    function test_lock_reverts() public {
        _bindAndStake(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, stranger));
        vm.prank(stranger);
        registry.lock(1, AGENT, controller, 1);
        vm.startPrank(locker);
        vm.expectRevert(IStakeRegistry.InvalidAmount.selector);
        registry.lock(1, AGENT, controller, 0);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(1 ether), uint256(2 ether))
        );
        registry.lock(1, AGENT, controller, 2 ether);
        vm.expectRevert(_wrongStatus(AGENT, stranger, IStakeRegistry.Status.None));
        registry.lock(1, AGENT, stranger, 1);
        vm.expectRevert(IStakeRegistry.ZeroAgentId.selector);
        registry.lock(1, bytes32(0), controller, 1);
        registry.lock(1, AGENT, controller, 0.5 ether);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.LockExists.selector, uint256(1)));
        registry.lock(1, AGENT, controller, 0.1 ether);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(0.5 ether), uint256(0.6 ether))
        );
        registry.lock(2, AGENT, controller, 0.6 ether);
        vm.stopPrank();
        vm.prank(controller);
        registry.revoke(AGENT);
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Revoked));
        vm.prank(locker);
        registry.lock(3, AGENT, controller, 1);
    }

    function test_unlock_slashesAtMostTheLockToTheBeneficiary() public {
        _bindAndStake(3 ether);
        _lock(9, 2 ether);
        vm.startPrank(locker);
        vm.expectRevert(
            abi.encodeWithSelector(IStakeRegistry.SlashAboveLock.selector, uint256(2 ether), uint256(2 ether + 1))
        );
        registry.unlock(9, controller, 2 ether, 2 ether + 1, victim);
        vm.expectRevert(IStakeRegistry.ZeroAddress.selector);
        registry.unlock(9, controller, 2 ether, 1, address(0));
        vm.expectEmit(true, true, false, true, address(registry));
        emit Slashed(AGENT, controller, 1.5 ether, victim, bytes32(uint256(9)));
        registry.unlock(9, controller, 2 ether, 1.5 ether, victim);
        vm.stopPrank();
        IStakeRegistry.Record memory r = registry.recordOf(AGENT, controller);
        vm.assertEq(uint256(r.staked), 1.5 ether, "slash taken from the stake");
        vm.assertEq(uint256(r.locked), 0, "lock ended");
        vm.assertEq(victim.balance, 1.5 ether, "beneficiary paid");
        vm.assertEq(address(registry).balance, 1.5 ether, "held == recorded");
    }

    /// @dev A job lock id: the top bit set, as SuretyHook derives them.
    function _jobLock(uint256 n) internal pure returns (uint256) {
        return (1 << 255) | n;
    }

    function test_constructor_fixesTheJobLocker() public view {
        vm.assertEq(registry.jobLocker(), jobLocker, "job locker");
        vm.assertEq(registry.JOB_LOCK_BIT(), 1 << 255, "the top bit");
        vm.assertEq(registry.lockerOf(7), locker, "a bounty id is the escrow's");
        vm.assertEq(registry.lockerOf(type(uint256).max >> 1), locker, "every id without the bit");
        vm.assertEq(registry.lockerOf(_jobLock(7)), jobLocker, "a job lock id is the hook's");
    }

    function test_lock_eachLockerOnlyItsOwnHalfOfTheIds() public {
        _bindAndStake(3 ether);
        // The escrow cannot take a job lock id, nor the job locker a bounty id.
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, locker));
        vm.prank(locker);
        registry.lock(_jobLock(1), AGENT, controller, 1 ether);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, jobLocker));
        vm.prank(jobLocker);
        registry.lock(1, AGENT, controller, 1 ether);
        // Both lock the same agent side by side, under ids that never collide.
        _lock(1, 1 ether);
        vm.expectEmit(true, true, true, true, address(registry));
        emit Locked(AGENT, controller, _jobLock(1), 1 ether);
        vm.prank(jobLocker);
        registry.lock(_jobLock(1), AGENT, controller, 1 ether);
        vm.assertEq(registry.freeStakeOf(AGENT, controller), 1 ether, "two locks");
        // Neither unlocks nor slashes the other's lock.
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, locker));
        vm.prank(locker);
        registry.unlock(_jobLock(1), controller, 1 ether, 1 ether, victim);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, jobLocker));
        vm.prank(jobLocker);
        registry.unlock(1, controller, 1 ether, 1 ether, victim);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, stranger));
        vm.prank(stranger);
        registry.unlock(_jobLock(1), controller, 1 ether, 0, address(0));
        // The job locker ends its own lock, slashing part of it.
        vm.prank(jobLocker);
        registry.unlock(_jobLock(1), controller, 1 ether, 0.25 ether, victim);
        vm.assertEq(victim.balance, 0.25 ether, "slashed to the beneficiary");
        vm.assertEq(registry.stakeOf(AGENT, controller), 2.75 ether, "stake less the slash");
        vm.assertEq(registry.freeStakeOf(AGENT, controller), 1.75 ether, "the bounty's lock holds");
        vm.assertEq(registry.lockedAgent(1), AGENT, "the escrow's lock untouched");
    }

    function test_lock_noJobLockerMeansNoJobLocks() public {
        vm.prank(locker);
        StakeRegistry solo = new StakeRegistry(address(0), DELAY, 0.1 ether, address(0));
        vm.assertEq(solo.lockerOf(_jobLock(1)), address(0), "nobody");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, locker));
        vm.prank(locker);
        solo.lock(_jobLock(1), AGENT, controller, 1);
    }

    function testFuzz_lockerOf_splitsTheIds(uint256 lockId) public view {
        address want = lockId >> 255 == 1 ? jobLocker : locker;
        vm.assertEq(registry.lockerOf(lockId), want, "locker");
    }

    function test_unlock_withoutALockIsANoOpButCannotSlash() public {
        _bindAndStake(1 ether);
        vm.startPrank(locker);
        registry.unlock(5, controller, 1 ether, 0, address(0));
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.UnknownLock.selector, uint256(5)));
        registry.unlock(5, controller, 1 ether, 1, victim);
        vm.stopPrank();
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotLocker.selector, stranger));
        vm.prank(stranger);
        registry.unlock(5, controller, 1 ether, 0, address(0));
        vm.assertEq(registry.stakeOf(AGENT, controller), 1 ether, "untouched");
    }

    function test_unlock_creditsABeneficiaryThatRefuses() public {
        _bindAndStake(1 ether);
        _lock(1, 1 ether);
        RejectingReceiver refuser = new RejectingReceiver();
        refuser.setRefusing(true);
        vm.prank(locker);
        registry.unlock(1, controller, 1 ether, 1 ether, address(refuser));
        vm.assertEq(registry.credit(address(refuser)), 1 ether, "credited, the ruling stands");
        vm.expectRevert(
            abi.encodeWithSelector(
                IStakeRegistry.TransferFailed.selector, address(0), address(refuser), uint256(1 ether)
            )
        );
        refuser.exec(address(registry), 0, abi.encodeCall(registry.withdrawCredit, ()));
        refuser.setRefusing(false);
        refuser.exec(address(registry), 0, abi.encodeCall(registry.withdrawCredit, ()));
        vm.assertEq(address(refuser).balance, 1 ether, "withdrawn");
        vm.expectRevert(IStakeRegistry.NothingToWithdraw.selector);
        refuser.exec(address(registry), 0, abi.encodeCall(registry.withdrawCredit, ()));
    }

    function test_unlock_reentrantBeneficiaryIsRefused() public {
        _bindAndStake(2 ether);
        _lock(1, 2 ether);
        ReentrantReceiver attacker = new ReentrantReceiver();
        attacker.arm(address(registry), abi.encodeCall(registry.withdrawCredit, ()));
        vm.prank(locker);
        registry.unlock(1, controller, 2 ether, 1 ether, address(attacker));
        vm.assertFalse(attacker.reentryOk(), "re-entry refused");
        vm.assertEq(bytes4(attacker.reentryResult()), ReentrancyGuard.Reentrancy.selector, "as Reentrancy");
        vm.assertEq(registry.stakeOf(AGENT, controller), 1 ether, "slashed once");
    }

    // --- rotate and revoke ---

    function test_rotate_movesStakeToTheNewId() public {
        _bindAndStake(4 ether);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 1 ether);
        vm.expectEmit(true, true, true, true, address(registry));
        emit Rotated(AGENT, controller, NEXT, "new-jws");
        vm.prank(controller);
        registry.rotate(AGENT, NEXT, "new-jws");
        vm.assertEq(registry.stakeOf(AGENT, controller), 0, "old id counts nothing");
        vm.assertEq(registry.stakeOf(NEXT, controller), 3 ether, "new id carries the stake");
        vm.assertEq(uint256(registry.recordOf(NEXT, controller).unbonding), 1 ether, "and the unbonding");
        vm.assertEq(_status(AGENT, controller), uint256(IStakeRegistry.Status.Rotated), "old is rotated");
        vm.assertEq(registry.successorOf(AGENT, controller), NEXT, "successor recorded");
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Rotated));
        vm.prank(controller);
        registry.bind(AGENT, "");
    }

    function test_rotate_reverts() public {
        _bindAndStake(1 ether);
        vm.startPrank(controller);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InvalidSuccessor.selector, AGENT));
        registry.rotate(AGENT, AGENT, "");
        registry.bind(NEXT, "");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InvalidSuccessor.selector, NEXT));
        registry.rotate(AGENT, NEXT, "");
        vm.stopPrank();
        vm.expectRevert(_wrongStatus(AGENT, stranger, IStakeRegistry.Status.None));
        vm.prank(stranger);
        registry.rotate(AGENT, keccak256("x"), "");
    }

    function test_revoke_stopsCountingButKeepsMoneyReachable() public {
        _bindAndStake(2 ether);
        vm.expectEmit(true, true, false, false, address(registry));
        emit Revoked(AGENT, controller);
        vm.prank(controller);
        registry.revoke(AGENT);
        vm.assertEq(registry.stakeOf(AGENT, controller), 0, "revoked stake does not count");
        vm.startPrank(controller);
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Revoked));
        registry.stake{value: 1}(AGENT, 1);
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Revoked));
        registry.revoke(AGENT);
        vm.expectRevert(_wrongStatus(AGENT, controller, IStakeRegistry.Status.Revoked));
        registry.rotate(AGENT, NEXT, "");
        registry.requestUnbond(AGENT, 2 ether);
        vm.warp(block.timestamp + DELAY);
        uint256 before = controller.balance;
        registry.withdraw(AGENT);
        vm.stopPrank();
        vm.assertEq(controller.balance - before, 2 ether, "withdrawn after revocation");
    }

    // --- fuzz ---

    function testFuzz_lockUnbondSlash_conservesFunds(uint96 rawStake, uint96 rawLock, uint96 rawUnbond, uint96 rawSlash)
        public
    {
        uint256 amount = bound(rawStake, 1, 100 ether);
        uint256 locked = bound(rawLock, 1, amount);
        uint256 unbond = bound(rawUnbond, 0, amount - locked);
        uint256 slashAmt = bound(rawSlash, 0, locked);
        _bindAndStake(amount);
        _lock(1, locked);
        if (unbond > 0) {
            vm.prank(controller);
            registry.requestUnbond(AGENT, unbond);
        }
        vm.prank(locker);
        registry.unlock(1, controller, locked, slashAmt, victim);
        IStakeRegistry.Record memory r = registry.recordOf(AGENT, controller);
        vm.assertEq(uint256(r.staked) + r.unbonding + victim.balance, amount, "nothing created or lost");
        vm.assertEq(address(registry).balance, uint256(r.staked) + r.unbonding, "held == recorded");
        vm.assertEq(uint256(r.unbonding), unbond, "a slash never touches unbonding stake");
        vm.assertEq(uint256(r.staked), amount - unbond - slashAmt, "taken from the locked stake");
    }

    function testFuzz_withdraw_onlyAfterDelay(uint64 rawWait) public {
        uint256 wait = bound(rawWait, 0, 2 * DELAY);
        _bindAndStake(1 ether);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 1 ether);
        uint64 unlockAt = uint64(block.timestamp) + DELAY;
        vm.warp(block.timestamp + wait);
        vm.prank(controller);
        if (block.timestamp < unlockAt) {
            vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.StillBonded.selector, unlockAt));
        }
        registry.withdraw(AGENT);
    }
}
