// SPDX-License-Identifier: UNLICENSED
pragma solidity 0.8.30;

import {Test} from "./lib/Test.sol";
import {StakeRegistry} from "../src/StakeRegistry.sol";
import {IStakeRegistry} from "../src/IStakeRegistry.sol";
import {MockERC20, FeeOnTransferToken, FalseToken} from "./mocks/Tokens.sol";
import {ReentrantReceiver, RejectingReceiver} from "./mocks/Receivers.sol";

contract StakeRegistryTest is Test {
    event Bound(bytes32 indexed agentId, address indexed controller, bytes proof);
    event Staked(bytes32 indexed agentId, address indexed controller, uint256 amount, uint256 staked);
    event UnbondRequested(bytes32 indexed agentId, address indexed controller, uint256 amount, uint64 unlockAt);
    event Withdrawn(bytes32 indexed agentId, address indexed controller, uint256 amount);
    event Slashed(bytes32 indexed agentId, address indexed controller, uint256 amount, address beneficiary, bytes32 reason);
    event Rotated(bytes32 indexed agentId, address indexed controller, bytes32 indexed newAgentId, bytes proof);
    event Revoked(bytes32 indexed agentId, address indexed controller);

    uint64 internal constant DELAY = 7 days;
    StakeRegistry internal registry;
    address internal owner = makeAddr("owner");
    address internal controller = makeAddr("controller");
    address internal slasher = makeAddr("slasher");
    address internal victim = makeAddr("victim");
    address internal stranger = makeAddr("stranger");
    bytes32 internal constant AGENT = keccak256("did:key:z6MkAgent");
    bytes32 internal constant NEXT = keccak256("did:key:z6MkAgentRotated");

    function setUp() public {
        vm.warp(1_700_000_000);
        registry = new StakeRegistry(address(0), DELAY, owner);
        vm.prank(owner);
        registry.setSlasher(slasher, true);
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
        vm.assertEq(registry.owner(), owner, "owner");
    }

    function test_constructor_revertsOnZeroOwner() public {
        vm.expectRevert(IStakeRegistry.ZeroAddress.selector);
        new StakeRegistry(address(0), DELAY, address(0));
    }

    function test_setSlasher_onlyOwner() public {
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotOwner.selector, stranger));
        vm.prank(stranger);
        registry.setSlasher(stranger, true);
        vm.expectRevert(IStakeRegistry.ZeroAddress.selector);
        vm.prank(owner);
        registry.setSlasher(address(0), true);
        vm.prank(owner);
        registry.setSlasher(slasher, false);
        vm.assertFalse(registry.isSlasher(slasher), "deauthorized");
    }

    function test_transferOwnership() public {
        vm.prank(owner);
        registry.transferOwnership(stranger);
        vm.assertEq(registry.owner(), stranger, "owner");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotOwner.selector, owner));
        vm.prank(owner);
        registry.setSlasher(owner, true);
        vm.expectRevert(IStakeRegistry.ZeroAddress.selector);
        vm.prank(stranger);
        registry.transferOwnership(address(0));
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
        StakeRegistry tokenRegistry = new StakeRegistry(address(fot), DELAY, owner);
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
        StakeRegistry tokenRegistry = new StakeRegistry(address(ft), DELAY, owner);
        ft.mint(controller, 1 ether);
        vm.startPrank(controller);
        ft.approve(address(tokenRegistry), 1 ether);
        tokenRegistry.bind(AGENT, "");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.TransferFailed.selector, address(ft), address(tokenRegistry), uint256(1 ether)));
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
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(1 ether), uint256(2 ether)));
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
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.StillBonded.selector, uint64(block.timestamp - 1 + DELAY)));
        vm.prank(controller);
        registry.withdraw(AGENT);
    }

    function test_withdraw_revertsWhenControllerRefusesAndKeepsStake() public {
        RejectingReceiver wallet = new RejectingReceiver();
        wallet.exec(address(registry), 0, abi.encodeCall(registry.bind, (AGENT, "")));
        wallet.exec{value: 1 ether}(address(registry), 1 ether, abi.encodeCall(registry.stake, (AGENT, 1 ether)));
        wallet.exec(address(registry), 0, abi.encodeCall(registry.requestUnbond, (AGENT, 1 ether)));
        vm.warp(block.timestamp + DELAY);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.TransferFailed.selector, address(0), address(wallet), uint256(1 ether)));
        wallet.exec(address(registry), 0, abi.encodeCall(registry.withdraw, (AGENT)));
        vm.assertEq(uint256(registry.recordOf(AGENT, address(wallet)).unbonding), 1 ether, "still there");
    }

    // --- slash ---

    function test_slash_takesBondedThenUnbonding() public {
        _bindAndStake(3 ether);
        vm.prank(controller);
        registry.requestUnbond(AGENT, 2 ether); // 1 bonded, 2 unbonding
        vm.expectEmit(true, true, false, true, address(registry));
        emit Slashed(AGENT, controller, 2 ether, victim, "fraud");
        vm.prank(slasher);
        registry.slash(AGENT, controller, 2 ether, victim, "fraud");
        IStakeRegistry.Record memory r = registry.recordOf(AGENT, controller);
        vm.assertEq(uint256(r.staked), 0, "bonded taken first");
        vm.assertEq(uint256(r.unbonding), 1 ether, "then unbonding");
        vm.assertEq(victim.balance, 2 ether, "beneficiary paid");
    }

    function test_slash_reverts() public {
        _bindAndStake(1 ether);
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.NotSlasher.selector, stranger));
        vm.prank(stranger);
        registry.slash(AGENT, controller, 1, victim, "");
        vm.startPrank(slasher);
        vm.expectRevert(IStakeRegistry.ZeroAddress.selector);
        registry.slash(AGENT, controller, 1, address(0), "");
        vm.expectRevert(IStakeRegistry.InvalidAmount.selector);
        registry.slash(AGENT, controller, 0, victim, "");
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.InsufficientStake.selector, uint256(1 ether), uint256(2 ether)));
        registry.slash(AGENT, controller, 2 ether, victim, "");
        RejectingReceiver refuser = new RejectingReceiver();
        vm.expectRevert(abi.encodeWithSelector(IStakeRegistry.TransferFailed.selector, address(0), address(refuser), uint256(1)));
        registry.slash(AGENT, controller, 1, address(refuser), "");
        vm.stopPrank();
        vm.assertEq(registry.stakeOf(AGENT, controller), 1 ether, "a failed slash leaves the stake");
    }

    function test_slash_reentrantBeneficiaryIsRefused() public {
        _bindAndStake(2 ether);
        ReentrantReceiver attacker = new ReentrantReceiver();
        attacker.arm(address(registry), abi.encodeCall(registry.slash, (AGENT, controller, 1 ether, address(attacker), "")));
        vm.prank(owner);
        registry.setSlasher(address(attacker), true); // even a slasher cannot re-enter
        vm.prank(slasher);
        registry.slash(AGENT, controller, 1 ether, address(attacker), "");
        vm.assertFalse(attacker.reentryOk(), "re-entry refused");
        vm.assertEq(bytes4(attacker.reentryResult()), IStakeRegistry.Reentrancy.selector, "as Reentrancy");
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

    function testFuzz_stakeUnbondSlash_conservesFunds(uint96 rawStake, uint96 rawUnbond, uint96 rawSlash) public {
        uint256 amount = bound(rawStake, 1, 100 ether);
        uint256 unbond = bound(rawUnbond, 0, amount);
        uint256 slashAmt = bound(rawSlash, 1, amount);
        _bindAndStake(amount);
        if (unbond > 0) {
            vm.prank(controller);
            registry.requestUnbond(AGENT, unbond);
        }
        vm.prank(slasher);
        registry.slash(AGENT, controller, slashAmt, victim, "");
        IStakeRegistry.Record memory r = registry.recordOf(AGENT, controller);
        vm.assertEq(uint256(r.staked) + r.unbonding + victim.balance, amount, "nothing created or lost");
        vm.assertEq(address(registry).balance, uint256(r.staked) + r.unbonding, "held == recorded");
        vm.assertEq(uint256(r.staked), amount - unbond >= slashAmt ? amount - unbond - slashAmt : 0, "bonded first");
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
